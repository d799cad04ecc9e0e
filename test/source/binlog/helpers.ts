/**
 * Shared helpers of the binlog/snapshot tests: connection config of the harness server, a SQL
 * runner, and collecting a reader's stream.
 */
import mysql from 'mysql2/promise';
import type { TableMapEntry } from '@vlasky/zongji';
import { sharedMysqlConfig } from '../../support/shared-mysql.js';
import type { MysqlConnectionConfig } from '../../../src/source/mysql/client.js';
import type { BinlogDecoding } from '../../../src/source/mysql/binlog-transactions.js';
import type { TableRef } from '../../../src/source/mysql/events.js';
import type { Row, Value } from '../../../src/model/values.js';

export function sourceConfig(): MysqlConnectionConfig {
  const c = sharedMysqlConfig();
  return { host: c.host, port: c.port, user: c.user, password: c.password };
}

export async function sql(): Promise<mysql.Connection> {
  return mysql.createConnection({ ...sharedMysqlConfig(), supportBigNumbers: true, bigNumberStrings: true });
}

/**
 * Test-only decoder for tables of INT/BIGINT/VARCHAR columns: integers as numbers (BigInt when
 * given as text), text as is. The real converters are H5's binlog-values.ts (used once committed).
 */
export const simpleDecoding: BinlogDecoding = {
  decoderFor(_t: TableRef, tm: TableMapEntry) {
    const names = tm.columnSchemas.map((c) => c.COLUMN_NAME);
    return (image) =>
      names.map((n): Value => {
        const v = image[n];
        if (v === null || v === undefined) return null;
        if (typeof v === 'number' || typeof v === 'string') return v;
        if (typeof v === 'bigint') return v;
        return String(v);
      }) as Row;
  },
};

let nextServerId = 5000 + (process.pid % 1000) * 20;
/** A replica server id unique within this test process. */
export function replicaId(): number {
  return nextServerId++;
}
