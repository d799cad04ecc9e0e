/**
 * Notifications: the log sink's lines, the one-stop-event rule, and the webhook sink against a real
 * local HTTP server — JSON bodies in order, retries with backoff on 5xx and dropped connections, no
 * retry on a 4xx, and a shutdown that waits a bounded time and never blocks `notify`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../../src/pipeline/observe/logger.js';
import { FanOutNotifier, LogSink, RecordingSink, describeEvent } from '../../../src/pipeline/observe/notifications.js';
import { WebhookSink } from '../../../src/pipeline/observe/notifications-webhook.js';
import { createNotifier } from '../../../src/pipeline/observe/notifications-setup.js';
import { parseConfig } from '../../../src/config/load.js';

interface Received {
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
}

let server: Server | undefined;

async function webhookServer(respond: (n: number, req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  let n = 0;
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      received.push({ body: JSON.parse(text) as Record<string, unknown>, headers: req.headers });
      respond(++n, req, res);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/floe?token=abc`, received };
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

function memoryLogger(): { logger: Logger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  const logger = createLogger({ format: 'json', destination, level: 'debug' });
  return { logger, lines: () => chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('notifications to the log', () => {
  it('logs every event with its fields, failures as errors, and only the first stop event', async () => {
    const { logger, lines } = memoryLogger();
    const recording = new RecordingSink();
    const notifier = new FanOutNotifier('job-7', [new LogSink(logger), recording], logger, () => new Date('2026-01-02T03:04:05.000Z'));
    notifier.notify({ type: 'snapshot-started', tables: ['shop.orders', 'shop.customers'] });
    notifier.notify({ type: 'table-snapshot-finished', table: 'shop.orders', rows: 400 });
    notifier.notify({ type: 'streaming-started', offset: '{"file":"binlog.000002","pos":1234}' });
    notifier.notify({ type: 'ddl-stop', statement: 'ALTER TABLE orders DROP COLUMN note', position: 'binlog.000002:5678 gtid=0-1-42' });
    notifier.notify({ type: 'failed', error: 'a second stop event is not delivered' });
    await notifier.close();

    expect(recording.received.map((n) => n.type)).toEqual(['snapshot-started', 'table-snapshot-finished', 'streaming-started', 'ddl-stop']);
    expect(recording.received[0]).toMatchObject({ job: 'job-7', time: '2026-01-02T03:04:05.000Z' });
    const logged = lines();
    expect(logged.map((l) => [l.level, l.notification])).toEqual([
      ['info', 'snapshot-started'],
      ['info', 'table-snapshot-finished'],
      ['info', 'streaming-started'],
      ['warn', 'ddl-stop'],
    ]);
    expect(logged[1]).toMatchObject({ msg: 'snapshot of shop.orders finished (400 rows)', table: 'shop.orders', rows: 400 });
    expect(logged[2]!.msg).toBe('binlog streaming started at {"file":"binlog.000002","pos":1234}');
    expect(logged[3]).toMatchObject({ position: 'binlog.000002:5678 gtid=0-1-42', statement: 'ALTER TABLE orders DROP COLUMN note' });
    expect(logged[3]!.msg).toContain('binlog.000002:5678 gtid=0-1-42');
  });

  it('RecordingSink.waitFor resolves for past and future events', async () => {
    const sink = new RecordingSink();
    const { logger } = memoryLogger();
    const notifier = new FanOutNotifier('j', [sink], logger);
    const future = sink.waitFor('streaming-started');
    notifier.notify({ type: 'snapshot-finished', tables: ['a.b'] });
    notifier.notify({ type: 'streaming-started', offset: 'x' });
    expect((await future).type).toBe('streaming-started');
    expect((await sink.waitFor('snapshot-finished')).type).toBe('snapshot-finished');
  });
});

describe('webhook notifications', () => {
  it('POSTs each notification as JSON, in order, with the configured headers and a text line', async () => {
    const hook = await webhookServer((_n, _req, res) => res.writeHead(204).end());
    const { logger } = memoryLogger();
    const config = parseConfig({ job: { id: 'shop-sync' }, notifications: { webhook: { url: hook.url, headers: { authorization: 'Bearer t0k3n' } } } });
    const notifier = createNotifier(config, logger);
    notifier.notify({ type: 'snapshot-started', tables: ['shop.orders'] });
    notifier.notify({ type: 'snapshot-finished', tables: ['shop.orders'] });
    notifier.notify({ type: 'streaming-started', offset: '{"file":"binlog.000001","pos":4}' });
    notifier.notify({ type: 'schema-change-applied', table: 'shop.orders', statement: 'ALTER TABLE orders ADD COLUMN gift BOOLEAN DEFAULT 0', position: 'binlog.000001:900', changes: ['add column gift boolean default false'] });
    notifier.notify({ type: 'stopped', reason: 'signal' });
    await notifier.close(5_000);

    expect(hook.received.map((r) => r.body.type)).toEqual(['snapshot-started', 'snapshot-finished', 'streaming-started', 'schema-change-applied', 'stopped']);
    const first = hook.received[0]!;
    expect(first.headers['content-type']).toBe('application/json');
    expect(first.headers.authorization).toBe('Bearer t0k3n');
    expect(first.body).toMatchObject({ type: 'snapshot-started', job: 'shop-sync', tables: ['shop.orders'], text: 'snapshot started for 1 table' });
    expect(typeof first.body.time).toBe('string');
    expect(hook.received[2]!.body).toMatchObject({ offset: '{"file":"binlog.000001","pos":4}', text: describeEvent({ type: 'streaming-started', offset: '{"file":"binlog.000001","pos":4}' }) });
  });

  it('retries 5xx answers and dropped connections with backoff, then delivers', async () => {
    const hook = await webhookServer((n, req, res) => {
      if (n === 1) res.writeHead(503).end('busy');
      else if (n === 2) req.socket.destroy();
      else res.writeHead(200).end('ok');
    });
    const { logger, lines } = memoryLogger();
    const sink = new WebhookSink({ url: hook.url, initialBackoffMs: 20, maxBackoffMs: 50 }, logger);
    const notifier = new FanOutNotifier('j', [sink], logger);
    notifier.notify({ type: 'ddl-stop', statement: 'DROP TABLE x', position: 'binlog.000003:77' });
    await notifier.close(5_000);
    expect(hook.received).toHaveLength(3);
    expect(hook.received.every((r) => r.body.type === 'ddl-stop' && r.body.position === 'binlog.000003:77')).toBe(true);
    const retries = lines().filter((l) => l.msg === 'webhook notification failed; retrying');
    expect(retries.map((l) => l.problem)).toEqual(['HTTP 503', expect.any(String)]);
    // The URL's query (a token) never reaches the log.
    expect(JSON.stringify(lines())).not.toContain('token=abc');
    expect(retries[0]!.webhook).toBe(hook.url.replace(/\?.*$/, ''));
  });

  it('does not retry a 4xx answer and logs that the endpoint refused it', async () => {
    const hook = await webhookServer((_n, _req, res) => res.writeHead(400).end('bad'));
    const { logger, lines } = memoryLogger();
    const notifier = new FanOutNotifier('j', [new WebhookSink({ url: hook.url, initialBackoffMs: 10 }, logger)], logger);
    notifier.notify({ type: 'failed', error: 'boom' });
    await notifier.close(5_000);
    expect(hook.received).toHaveLength(1);
    const error = lines().find((l) => l.msg === 'webhook notification not delivered');
    expect(error).toMatchObject({ level: 'error', problem: 'HTTP 400', attempts: 1 });
  });

  it('never blocks notify on a hanging endpoint, and close gives up after its timeout', async () => {
    const hook = await webhookServer(() => {
      /* never answers */
    });
    const { logger, lines } = memoryLogger();
    const notifier = new FanOutNotifier('j', [new WebhookSink({ url: hook.url, attemptTimeoutMs: 60_000 }, logger)], logger);
    for (let i = 0; i < 50; i++) notifier.notify({ type: 'table-snapshot-finished', table: `db.t${i}`, rows: i });
    await new Promise((r) => setTimeout(r, 100));
    expect(hook.received).toHaveLength(1); // the first is in flight; the others wait in the queue
    await notifier.close(300);
    expect(lines().find((l) => l.msg === 'webhook notifications not delivered before shutdown')).toMatchObject({ pending: 50, timeoutMs: 300 });
  });

  it('drops the oldest queued notification when the queue is full', async () => {
    let release: (() => void) | undefined;
    const hook = await webhookServer((n, _req, res) => {
      if (n === 1) release = () => res.writeHead(200).end();
      else res.writeHead(200).end();
    });
    const { logger, lines } = memoryLogger();
    const notifier = new FanOutNotifier('j', [new WebhookSink({ url: hook.url, maxQueue: 3 }, logger)], logger);
    for (let i = 0; i < 5; i++) notifier.notify({ type: 'table-snapshot-finished', table: `db.t${i}`, rows: i });
    while (!release) await new Promise((r) => setTimeout(r, 10));
    release();
    await notifier.close(5_000);
    // t0 was in flight; the queue then held at most 3 of t1..t4, so t1 was dropped.
    expect(hook.received.map((r) => r.body.table)).toEqual(['db.t0', 'db.t2', 'db.t3', 'db.t4']);
    expect(lines().filter((l) => l.msg === 'webhook queue full; dropped the oldest notification')).toHaveLength(1);
  });
});
