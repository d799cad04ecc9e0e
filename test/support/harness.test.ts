import { describe, expect, it } from 'vitest';
import mysql from 'mysql2/promise';
import { sharedMysqlConfig, createTestDatabase } from './shared-mysql.js';

describe('test harness', () => {
  it('serves a binlog-enabled MySQL-compatible server with row-based full images', async () => {
    const db = await createTestDatabase('harness');
    const conn = await mysql.createConnection({ ...sharedMysqlConfig(), database: db });
    try {
      const [rows] = await conn.query('SELECT @@log_bin AS log_bin, @@binlog_format AS fmt, @@binlog_row_image AS img');
      expect(rows).toEqual([{ log_bin: 1, fmt: 'ROW', img: 'FULL' }]);
    } finally {
      await conn.end();
    }
  });
});
