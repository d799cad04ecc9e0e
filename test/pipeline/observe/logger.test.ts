/**
 * The logger: JSON lines for machines, a readable line format for terminals, errors with their kind
 * and cause, and no credentials in either.
 */
import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { parseConfig } from '../../../src/config/load.js';
import { createLogger, prettyLine } from '../../../src/pipeline/observe/logger.js';
import { FloeError } from '../../../src/util/errors.js';

function capture(isTTY: boolean): { stream: Writable & { isTTY?: boolean }; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      text += chunk.toString();
      cb();
    },
  }) as Writable & { isTTY?: boolean };
  stream.isTTY = isTTY;
  return { stream, text: () => text };
}

describe('logger', () => {
  it('writes JSON lines when the destination is not a terminal, with bindings, levels and error details', () => {
    const out = capture(false);
    const logger = createLogger({ destination: out.stream, level: 'info' }).child({ table: 'shop.orders' });
    logger.debug('not shown at info');
    logger.info('committed', { checkpoint: 12n, files: 3 });
    const cause = new Error('socket hang up');
    logger.error('commit failed', { err: new FloeError('catalog.filesystem', 'commit-state-unknown', 'outcome unknown', { cause }) });
    const lines = out.text().trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ level: 'info', msg: 'committed', table: 'shop.orders', checkpoint: 12, files: 3 });
    expect(typeof lines[0].time).toBe('string');
    expect(lines[1].err).toMatchObject({ type: 'FloeError', subsystem: 'catalog.filesystem', kind: 'commit-state-unknown', message: 'catalog.filesystem: outcome unknown' });
    expect(lines[1].err.cause).toMatchObject({ message: 'socket hang up' });
  });

  it('never writes credentials: config secrets, URL passwords and secret-named fields are masked', () => {
    const out = capture(false);
    const logger = createLogger({ destination: out.stream });
    const config = parseConfig({
      source: { url: 'mysql://repl:S3cr3t-url@db:3306', password: 'S3cr3t-field' },
      warehouse: { location: 's3://lake/wh', s3: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'S3cr3t-s3' } },
      transforms: [{ column: 'shop.customers.email', type: 'hash', salt: 'S3cr3t-salt' }],
    });
    logger.info('starting', { config });
    logger.warn('retrying', { url: 'mysql://u:S3cr3t-inline@h/db', password: 'S3cr3t-top', token: 'S3cr3t-token' });
    const text = out.text();
    expect(text).not.toMatch(/S3cr3t/);
    expect(text).toContain('mysql://repl:***@db:3306');
    expect(text).toContain('AKIAEXAMPLE'); // an access key id is an identifier, not a secret
  });

  it('formats lines for a terminal: time, level, message, fields, error message and cause', () => {
    const line = prettyLine(
      JSON.stringify({ level: 'warn', time: '2026-03-01T01:02:03.004Z', pid: 1, msg: 'webhook failed', attempt: 2, webhook: 'http://h/x', problem: 'HTTP 503 busy', err: { type: 'Error', message: 'top', cause: { type: 'Error', message: 'root cause' } } }),
      false,
    );
    expect(line).toMatch(/^\d\d:\d\d:\d\d\.004 WARN  webhook failed attempt=2 webhook=http:\/\/h\/x problem="HTTP 503 busy"\n    top\n    caused by: root cause\n$/);
    const out = capture(true);
    createLogger({ destination: out.stream, color: false }).info('hello', { n: 1 });
    expect(out.text()).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO  hello n=1\n$/);
  });
});
