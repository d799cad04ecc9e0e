/**
 * A binlog reader closed while it is still starting (connecting, reading the server's identity,
 * resolving its start) leaves no connection behind: its control connection is closed as soon as it
 * exists. A reader that is opened and closed at once — `floe verify`'s change log of a table that
 * compares in a few milliseconds — kept the process alive otherwise.
 */
import { describe, expect, it } from 'vitest';
import { BinlogReader } from '../../../../src/source/mysql/binlog/binlog-reader.js';
import { decodingFor, replicaId, sourceConfig } from './helpers.js';
import { createTestDatabase } from '../../../support/shared-mysql.js';

function sockets(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
}

describe('binlog reader close', () => {
  it('closes its connections when closed at any moment of its start', async () => {
    const db = await createTestDatabase('reader_close');
    const decoding = await decodingFor([]);
    const before = sockets();
    for (const delayMs of [0, 1, 3, 10, 30, 100, 300]) {
      const reader = new BinlogReader({ connection: sourceConfig(), serverId: replicaId(), start: { kind: 'latest' }, tables: [{ database: db, table: 't' }], decoding, heartbeatMs: 500 });
      const next = reader[Symbol.asyncIterator]().next();
      await new Promise((r) => setTimeout(r, delayMs));
      await reader.close();
      expect((await next).done, `closed after ${delayMs} ms`).toBe(true);
    }
    // a closed socket leaves the list once its close callback ran
    for (let i = 0; i < 50 && sockets() > before; i++) await new Promise((r) => setTimeout(r, 100));
    expect(sockets()).toBe(before);
  });
});
