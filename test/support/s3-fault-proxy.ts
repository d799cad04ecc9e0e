/**
 * A fault-injecting HTTP proxy between floe's S3 client and a real S3 server (moto): floe's endpoint is
 * the proxy, which forwards every request to the server unchanged (path-style addressing, so the Host
 * header does not matter; SigV4 is not verified by moto) unless the seeded schedule picks a fault:
 *
 * - `latency`: the request waits `latencyMs` before it is forwarded;
 * - `error500`: answers 500 InternalError without forwarding;
 * - `slowDown503`: answers 503 SlowDown (S3's throttling answer) without forwarding;
 * - `resetUpload`: for a request with a body, forwards half of the body, then destroys both the
 *   upstream request and the client's connection (a reset mid-upload);
 * - `resetDownload`: forwards the request, relays the response's headers and part of its body, then
 *   destroys the client's connection (a reset mid-download, after the SDK has handed the body stream
 *   to its caller — which the SDK's retry strategy does not cover);
 * - `dropResponse`: forwards the whole request, lets the server carry it out, then closes the client's
 *   connection without relaying the answer — the ambiguous failure: a PUT that did land (a conditional
 *   create retried after it gets 412 about its own object: S3FileIO.writeIfAbsent compares the bytes);
 * - `stall`: the connection goes silent without closing — a GET gets its headers and half of its body,
 *   anything else no answer at all — until the client gives up (its socket timeout);
 * - `throttle`: relays the response body at `throttleBytesPerSecond`.
 *
 * The schedule is a pure function of the seed and the order of requests (src/util/prng.ts): one draw
 * per request, so the same seed and the same request order give the same faults (concurrent requests
 * may arrive in another order from run to run). `maxConsecutiveFaults` bounds the
 * faults injected in a row on one operation (method, path and query), after which the next two
 * requests of it go through: with the SDK's default of 3 attempts, 2 keeps every operation recoverable
 * by retrying, which is what the "floe survives faults" tests need; `failAlways` makes chosen
 * operations fail every time (the "retries exhausted" tests).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { prng } from '../../src/util/prng.js';

export type FaultKind = 'latency' | 'error500' | 'slowDown503' | 'resetUpload' | 'resetDownload' | 'dropResponse' | 'stall' | 'throttle';

export interface FaultSchedule {
  seed: number;
  /** Probability of each fault per request; their sum must be at most 1. */
  rates: Partial<Record<FaultKind, number>>;
  latencyMs?: number;
  throttleBytesPerSecond?: number;
  /** Faults in a row on one operation (method + path) before one is let through. Default 2. */
  maxConsecutiveFaults?: number;
  /** Only requests this accepts can get a fault (default: all). */
  applies?: (request: { method: string; path: string; query: string }) => boolean;
}

interface ProxiedRequest {
  method: string;
  path: string;
  atMs: number;
  fault: FaultKind | 'none' | 'fail-always';
  /** The server's status code, when the request reached it. */
  status?: number;
}

export interface S3FaultProxy {
  /** The endpoint to give floe's S3 client. */
  endpoint: string;
  /** Every request seen, in order. */
  readonly requests: ProxiedRequest[];
  /** Faults injected, by kind. */
  counts(): Record<FaultKind | 'fail-always', number>;
  /** Changes the schedule (undefined: forward everything). */
  setSchedule(schedule: FaultSchedule | undefined): void;
  /** Every request accepted by this predicate fails with `status` (500 or 503) until cleared. */
  failAlways(predicate: ((request: { method: string; path: string }) => boolean) | undefined, status?: 500 | 503): void;
  close(): Promise<void>;
}

const ERROR_BODIES: Record<500 | 503, { code: string; message: string }> = {
  500: { code: 'InternalError', message: 'We encountered an internal error. Please try again. (injected by s3-fault-proxy)' },
  503: { code: 'SlowDown', message: 'Please reduce your request rate. (injected by s3-fault-proxy)' },
};

export async function startS3FaultProxy(upstream: string, initial?: FaultSchedule): Promise<S3FaultProxy> {
  const target = new URL(upstream);
  const requests: ProxiedRequest[] = [];
  const counts: Record<FaultKind | 'fail-always', number> = { latency: 0, error500: 0, slowDown503: 0, resetUpload: 0, resetDownload: 0, dropResponse: 0, stall: 0, throttle: 0, 'fail-always': 0 };
  let schedule = initial;
  let random = prng(initial?.seed ?? 1);
  const consecutive = new Map<string, { inRow: number; grace: number }>();
  let failing: { predicate: (r: { method: string; path: string }) => boolean; status: 500 | 503 } | undefined;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const started = Date.now();

  const choose = (method: string, path: string, query: string, hasBody: boolean): FaultKind | 'none' => {
    if (schedule === undefined) return 'none';
    // One draw per request whether or not it applies: the sequence depends only on the seed and order.
    const draw = random();
    if (schedule.applies && !schedule.applies({ method, path, query })) return 'none';
    // Multipart calls share the object's path: the query (uploads, partNumber, uploadId) tells them apart.
    const op = `${method} ${path}?${query}`;
    const state = consecutive.get(op) ?? { inRow: 0, grace: 0 };
    consecutive.set(op, state);
    let kind: FaultKind | 'none' = 'none';
    let acc = 0;
    for (const k of ['latency', 'error500', 'slowDown503', 'resetUpload', 'resetDownload', 'dropResponse', 'stall', 'throttle'] as const) {
      acc += schedule.rates[k] ?? 0;
      if (draw < acc) {
        kind = k;
        break;
      }
    }
    if (kind === 'resetUpload' && !hasBody) kind = 'error500';
    if (kind === 'resetDownload' && method === 'HEAD') kind = 'slowDown503';
    // latency and throttle only slow a request down; the others make it fail.
    const failing = kind !== 'none' && kind !== 'latency' && kind !== 'throttle';
    const max = schedule.maxConsecutiveFaults ?? 2;
    if (failing && (state.grace > 0 || state.inRow >= max)) kind = 'none';
    if (kind !== 'none' && failing) {
      // After `max` faults in a row, the next two requests of the operation go through: two, not one,
      // because two callers may be retrying the same request at once (one's success must not reset
      // the count while the other has used up its attempts).
      if (++state.inRow >= max) state.grace = 2;
    } else if (state.grace > 0) {
      if (--state.grace === 0) state.inRow = 0;
    } else {
      state.inRow = 0;
    }
    return kind;
  };

  const server = http.createServer((req, res) => {
    const method = req.method ?? 'GET';
    const [path = '/', query = ''] = (req.url ?? '/').split('?');
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0;
    const entry: ProxiedRequest = { method, path, atMs: Date.now() - started, fault: 'none' };
    requests.push(entry);
    if (failing?.predicate({ method, path })) {
      entry.fault = 'fail-always';
      counts['fail-always']++;
      return answerError(req, res, failing.status);
    }
    const fault = choose(method, path, query, hasBody);
    entry.fault = fault;
    if (fault !== 'none') counts[fault]++;
    switch (fault) {
      case 'error500':
        return answerError(req, res, 500);
      case 'slowDown503':
        return answerError(req, res, 503);
      case 'latency':
        setTimeout(() => forward(req, res, 'none', entry), schedule?.latencyMs ?? 200);
        return;
      default:
        forward(req, res, fault, entry);
    }
  });

  const forward = (req: http.IncomingMessage, res: http.ServerResponse, fault: FaultKind | 'none', entry: ProxiedRequest): void => {
    const upstreamRequest = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent },
      (upstreamResponse) => {
        entry.status = upstreamResponse.statusCode;
        if (fault === 'stall' && req.method !== 'GET') {
          upstreamResponse.resume(); // the server's answer is never relayed
          return;
        }
        if (fault === 'dropResponse') {
          upstreamResponse.resume();
          upstreamResponse.on('end', () => res.socket?.destroy());
          return;
        }
        res.writeHead(upstreamResponse.statusCode ?? 502, upstreamResponse.headers);
        if (fault === 'resetDownload' || fault === 'stall') {
          const length = Number(upstreamResponse.headers['content-length'] ?? 0);
          let sent = 0;
          const cut = Math.max(1, Math.floor(length / 2));
          upstreamResponse.on('data', (chunk: Buffer) => {
            if (sent >= cut) return;
            const part = chunk.subarray(0, cut - sent);
            sent += part.length;
            if (sent < cut) {
              res.write(part);
              return;
            }
            upstreamResponse.destroy();
            if (fault === 'stall') {
              res.write(part); // and then nothing more, until the client closes the connection
              return;
            }
            // Only once the headers and the first bytes are on the wire: destroying the socket earlier
            // would drop them, and the client would see a reset before any response (another fault).
            res.write(part, () => setTimeout(() => res.socket?.destroy(), 5));
          });
          upstreamResponse.on('end', () => {
            // No body (or an empty one): send the headers, then cut.
            if (sent === 0) {
              res.flushHeaders();
              if (fault === 'stall') return;
              setTimeout(() => res.socket?.destroy(), 5);
            }
          });
          return;
        }
        if (fault === 'throttle') {
          const rate = schedule?.throttleBytesPerSecond ?? 64 * 1024;
          upstreamResponse.on('data', (chunk: Buffer) => {
            upstreamResponse.pause();
            res.write(chunk);
            setTimeout(() => upstreamResponse.resume(), Math.ceil((chunk.length / rate) * 1000));
          });
          upstreamResponse.on('end', () => res.end());
          return;
        }
        upstreamResponse.pipe(res);
      },
    );
    upstreamRequest.on('error', () => res.socket?.destroy());
    if (fault === 'resetUpload') {
      const length = Number(req.headers['content-length'] ?? 0);
      const cut = Math.max(1, Math.floor(length / 2));
      let sent = 0;
      req.on('data', (chunk: Buffer) => {
        if (sent >= cut) return;
        const part = chunk.subarray(0, cut - sent);
        sent += part.length;
        upstreamRequest.write(part);
        if (sent >= cut) {
          // The server has received part of the body and then loses the connection, as does the client.
          upstreamRequest.destroy();
          req.socket.destroy();
        }
      });
      return;
    }
    req.pipe(upstreamRequest);
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    counts: () => ({ ...counts }),
    setSchedule(next) {
      schedule = next;
      random = prng(next?.seed ?? 1);
      consecutive.clear();
    },
    failAlways(predicate, status = 500) {
      failing = predicate === undefined ? undefined : { predicate, status };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

/** An S3 error answer, after draining the request body (a client still sending would see a reset). */
function answerError(req: http.IncomingMessage, res: http.ServerResponse, status: 500 | 503): void {
  const { code, message } = ERROR_BODIES[status];
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>fault-proxy</RequestId></Error>`;
  req.resume();
  req.on('end', () => {
    res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}
