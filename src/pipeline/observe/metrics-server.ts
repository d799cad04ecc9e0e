/**
 * Serves a metrics registry over HTTP for Prometheus: `GET /metrics` in the text exposition format,
 * `GET /healthz` → 200 "ok". Anything else is 404. Binds to all interfaces by default, because the
 * scraper normally runs on another host.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { FloeError, errorMessage } from '../../util/errors.js';

export interface MetricsServer {
  /** The bound port (useful with port 0). */
  readonly port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(registry: Registry, options: { port: number; host?: string }): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
        (e: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics: ${errorMessage(e)}\n`),
      );
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) =>
      reject(new FloeError('pipeline.metrics', 'config', `cannot serve metrics on port ${options.port}: ${errorMessage(e)}; choose another metrics.port or free it`, { cause: e })),
    );
    server.listen(options.port, options.host ?? '0.0.0.0', () => resolve());
  });
  // Scrapes must not keep a stopping process alive.
  server.unref();
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
