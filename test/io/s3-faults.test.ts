/**
 * S3FileIO against a real S3 server (moto) through the fault proxy (test/support/s3-fault-proxy.ts):
 * each kind of object-store fault, injected on every operation up to the retry budget, is absorbed by
 * retries with backoff; faults that outlast the retries fail with an error that names the subsystem,
 * the operation and the key, and never the credentials.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3FileIO } from '../../src/io/s3-file-io.js';
import { isFloeError } from '../../src/util/errors.js';
import { MOTO_ACCESS_KEY_ID, MOTO_SECRET_ACCESS_KEY, motoStatus, startMoto } from '../support/moto-server.js';
import { startS3FaultProxy, type FaultKind, type S3FaultProxy } from '../support/s3-fault-proxy.js';
import type { TestS3Server } from '../support/s3-server.js';

const moto = motoStatus();
if (!moto.available) console.warn(`[floe] skipping the S3 fault tests: ${moto.reason}`);

function bytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

describe.skipIf(!moto.available)(`S3FileIO under object-store faults (moto + fault proxy)${moto.available ? '' : ` — skipped: ${moto.reason}`}`, () => {
  let s3: TestS3Server;
  let proxy: S3FaultProxy;
  let io: S3FileIO;
  let direct: S3FileIO;
  beforeAll(async () => {
    s3 = await startMoto();
    proxy = await startS3FaultProxy(s3.config.endpoint!);
    io = new S3FileIO({ ...s3.config, endpoint: proxy.endpoint });
    direct = new S3FileIO(s3.config);
  });
  afterAll(async () => {
    await io?.close();
    await direct?.close();
    await proxy?.close();
    await s3?.stop();
  });

  const kinds: FaultKind[] = ['error500', 'slowDown503', 'resetUpload', 'resetDownload', 'dropResponse', 'latency', 'throttle'];
  for (const kind of kinds) {
    it(`absorbs ${kind} on every operation (two in a row, then through)`, async () => {
      const prefix = `s3://${s3.bucket}/faults-${kind}-${randomUUID()}`;
      const data = bytes(300_000, kinds.indexOf(kind));
      const before = proxy.counts()[kind];
      // SlowDown is backed off from a 500 ms base (throttling): one in a row keeps this test short.
      proxy.setSchedule({ seed: 7, rates: { [kind]: 1 }, maxConsecutiveFaults: kind === 'slowDown503' ? 1 : 2, latencyMs: 50, throttleBytesPerSecond: 4 * 1024 * 1024 });
      try {
        await io.write(`${prefix}/data.bin`, data);
        expect(await io.writeIfAbsent(`${prefix}/v1.metadata.json`, data.subarray(0, 1000))).toBe(true);
        expect(await io.writeIfAbsent(`${prefix}/v1.metadata.json`, data.subarray(1, 1001))).toBe(false);
        expect(Buffer.from(await io.read(`${prefix}/data.bin`)).equals(Buffer.from(data))).toBe(true);
        expect(Buffer.from(await io.readRange(`${prefix}/data.bin`, 1000, 201_000)).equals(Buffer.from(data.subarray(1000, 201_000)))).toBe(true);
        expect(await io.size(`${prefix}/data.bin`)).toBe(data.length);
        expect((await io.list(prefix)).sort()).toEqual([`${prefix}/data.bin`, `${prefix}/v1.metadata.json`]);
      } finally {
        proxy.setSchedule(undefined);
      }
      // Every operation met the fault (resetUpload becomes a 500 where there is no body to cut, a
      // download reset on HEAD a 503; an operation repeated right after one that used up its faults
      // passes): at least one per PUT and per GET kind of call.
      expect(proxy.counts()[kind] - before).toBeGreaterThanOrEqual(kind === 'resetUpload' ? 2 : 4);
      // What the server holds is complete: a cut upload never left a partial object behind.
      expect(Buffer.from(await direct.read(`${prefix}/data.bin`)).equals(Buffer.from(data))).toBe(true);
      expect(Buffer.from(await direct.read(`${prefix}/v1.metadata.json`)).equals(Buffer.from(data.subarray(0, 1000)))).toBe(true);
    });
  }

  it('a connection that goes silent fails after the socket timeout and is retried (downloads mid-body, uploads before the answer)', async () => {
    // Without a socket timeout (the SDK's default) each of these hung until the OS gave up on the socket.
    const impatient = new S3FileIO({ ...s3.config, endpoint: proxy.endpoint, socketTimeoutMs: 1000 });
    const prefix = `s3://${s3.bucket}/stall-${randomUUID()}`;
    const data = bytes(200_000, 9);
    const before = proxy.counts().stall;
    proxy.setSchedule({ seed: 13, rates: { stall: 1 }, maxConsecutiveFaults: 1 });
    const started = Date.now();
    try {
      await impatient.write(`${prefix}/data.bin`, data);
      // The stalled first attempt did reach the server: the retry's 412 is about our own object.
      expect(await impatient.writeIfAbsent(`${prefix}/v1.metadata.json`, data.subarray(0, 500))).toBe(true);
      expect(Buffer.from(await impatient.read(`${prefix}/data.bin`)).equals(Buffer.from(data))).toBe(true);
    } finally {
      proxy.setSchedule(undefined);
      await impatient.close();
    }
    expect(proxy.counts().stall - before).toBeGreaterThanOrEqual(3); // one per operation, and the own-object check's read
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
  });

  for (const kind of ['resetUpload', 'error500', 'dropResponse'] as const) {
    it(`a multipart upload absorbs ${kind} on every call (create, each part, complete)`, async () => {
      // Parts of 5 MiB (S3's minimum) from 5 MiB up: an 11 MiB object goes up in three parts.
      const multipart = new S3FileIO({ ...s3.config, endpoint: proxy.endpoint, multipartThresholdBytes: 5 * 1024 * 1024, multipartPartSizeBytes: 5 * 1024 * 1024 });
      const key = `s3://${s3.bucket}/multipart-${kind}-${randomUUID()}/big.parquet`;
      const data = bytes(11 * 1024 * 1024, 21);
      const from = proxy.requests.length;
      proxy.setSchedule({ seed: 17, rates: { [kind]: 1 }, maxConsecutiveFaults: 1, applies: (r) => r.method === 'POST' || r.query.includes('partNumber=') });
      try {
        await multipart.write(key, data);
      } finally {
        proxy.setSchedule(undefined);
        await multipart.close();
      }
      const calls = proxy.requests.slice(from);
      // create (without a body, a resetUpload becomes a 500 there), 3 parts, complete
      expect(calls.filter((r) => r.fault !== 'none').length).toBeGreaterThanOrEqual(5);
      expect(calls.filter((r) => r.fault === kind).length).toBeGreaterThanOrEqual(4);
      expect(Buffer.from(await direct.read(key)).equals(Buffer.from(data))).toBe(true);
    });
  }

  it('waits between attempts (backoff), not in a tight loop', async () => {
    const prefix = `s3://${s3.bucket}/backoff-${randomUUID()}`;
    proxy.setSchedule({ seed: 11, rates: { error500: 1 }, maxConsecutiveFaults: 2 });
    const from = proxy.requests.length;
    try {
      for (let i = 0; i < 8; i++) await io.write(`${prefix}/o${i}`, bytes(100, i));
    } finally {
      proxy.setSchedule(undefined);
    }
    const seen = proxy.requests.slice(from);
    expect(seen.length).toBe(8 * 3); // two faults, then the attempt that went through
    let waited = 0;
    for (let i = 0; i < 8; i++) waited += seen[i * 3 + 2]!.atMs - seen[i * 3]!.atMs;
    // The SDK's standard strategy sleeps random(0, 100 ms · 2^attempt) before each retry: 8 operations
    // with two retries each wait about 2.4 s in all; a strategy without backoff takes a few ms.
    expect(waited).toBeGreaterThan(300);
  });

  it('still retries after hundreds of retried requests (no client-wide retry quota)', async () => {
    // The SDK's standard mode keeps 500 retry tokens per client (5 per retry; a success refunds only its
    // last retry's cost) and stops retrying when they run out: 150 operations that each need two retries
    // used to exhaust them, and the rest failed on their first fault. One fresh client, so that this
    // test does not depend on what the others spent.
    const fresh = new S3FileIO({ ...s3.config, endpoint: proxy.endpoint });
    const prefix = `s3://${s3.bucket}/no-quota-${randomUUID()}`;
    const before = proxy.counts().error500;
    proxy.setSchedule({ seed: 5, rates: { error500: 1 }, maxConsecutiveFaults: 2 });
    try {
      const keys = Array.from({ length: 150 }, (_, i) => `${prefix}/o${i}`);
      for (let i = 0; i < keys.length; i += 30) await Promise.all(keys.slice(i, i + 30).map((k, j) => fresh.write(k, bytes(16, i + j))));
    } finally {
      proxy.setSchedule(undefined);
      await fresh.close();
    }
    expect(proxy.counts().error500 - before).toBe(300);
    expect((await direct.list(prefix)).length).toBe(150);
  });

  describe('faults that outlast the retries', () => {
    // Two attempts instead of three: the same exhaustion, in less time.
    let brief: S3FileIO;
    beforeAll(() => {
      brief = new S3FileIO({ ...s3.config, endpoint: proxy.endpoint, maxAttempts: 2 });
    });
    afterAll(async () => {
      await brief?.close();
    });
    const operations: Array<{ name: string; action: string; run: (io: S3FileIO, key: string) => Promise<unknown> }> = [
      { name: 'read', action: 'read', run: (i, k) => i.read(k) },
      { name: 'readRange', action: 'read', run: (i, k) => i.readRange(k, 0, 10) },
      { name: 'write', action: 'write', run: (i, k) => i.write(k, bytes(10, 1)) },
      { name: 'writeIfAbsent', action: 'create', run: (i, k) => i.writeIfAbsent(k, bytes(10, 1)) },
      { name: 'size', action: 'stat', run: (i, k) => i.size(k) },
      { name: 'delete', action: 'delete', run: (i, k) => i.delete(k) },
    ];
    for (const op of operations) {
      for (const status of [500, 503] as const) {
        it(`${op.name} answered ${status} every time: the error names io.s3, the operation and the key, not the credentials`, async () => {
          const key = `s3://${s3.bucket}/exhaust-${randomUUID()}/obj`;
          await direct.write(key, bytes(20, 2));
          const path = `/${key.slice('s3://'.length)}`; // path-style: /bucket/key
          proxy.failAlways((r) => r.path === path, status);
          let error: unknown;
          try {
            await op.run(brief, key);
          } catch (e) {
            error = e;
          } finally {
            proxy.failAlways(undefined);
          }
          expect(isFloeError(error)).toBe(true);
          const message = (error as Error).message;
          expect(message).toMatch(new RegExp(`^io\\.s3: cannot ${op.action} ${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `));
          // HEAD answers carry no body, so no error code: the status tells (S3 does the same).
          expect(message).toContain(op.name === 'size' ? `(HTTP ${status}` : status === 500 ? 'InternalError' : 'SlowDown');
          const everything = JSON.stringify({ message, context: (error as { context?: unknown }).context, cause: String((error as Error).cause) });
          expect(everything).not.toContain(MOTO_SECRET_ACCESS_KEY);
          expect(everything).not.toContain(MOTO_ACCESS_KEY_ID);
          expect((error as { retryable?: boolean }).retryable).toBe(true);
        });
      }
    }

    it('a download cut every time: the error names io.s3, read and the key', async () => {
      const key = `s3://${s3.bucket}/exhaust-${randomUUID()}/cut`;
      await direct.write(key, bytes(50_000, 3));
      proxy.setSchedule({ seed: 3, rates: { resetDownload: 1 }, maxConsecutiveFaults: 1_000 });
      let error: unknown;
      try {
        await brief.read(key);
      } catch (e) {
        error = e;
      } finally {
        proxy.setSchedule(undefined);
      }
      expect(isFloeError(error)).toBe(true);
      expect((error as Error).message).toMatch(new RegExp(`^io\\.s3: cannot read ${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `));
      expect((error as Error).message).not.toContain(MOTO_SECRET_ACCESS_KEY);
      // A broken connection is worth another try later (callers that retry whole operations look at this).
      expect((error as { retryable?: boolean }).retryable).toBe(true);
    });
  });
});
