/**
 * Which tables a purged binlog concerns (src/pipeline/purged-binlog-check.ts): a table's resume points
 * are its streaming offset, or the high watermarks of its finished chunks while it snapshots; only
 * file/position offsets of this server are checked. The end-to-end run is
 * test/e2e/mysql-silence-and-purge.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { purgedTables, purgedTablesError, resumePoints, withPurgedTables, type ResumingTable } from '../../src/pipeline/purged-binlog-check.js';
import { purgedBinlogError } from '../../src/source/mysql/binlog/binlog-errors.js';
import { mariadbGtids } from '../../src/source/mysql/offset/offset.js';
import { FloeError } from '../../src/util/errors.js';
import { serializeOffset, type BinlogOffset } from '../../src/source/mysql/offset/offset.js';
import type { TableProgress } from '../../src/pipeline/state.js';

const at = (file: string, position = 4, serverId = 1): BinlogOffset => ({ file, position, serverId });
const table = (name: string, progress: TableProgress | undefined, location = `file:///w/lake/db/${name}`): ResumingTable => ({
  key: `db.${name}`,
  identifier: { namespace: ['db'], name },
  location,
  progress,
});
const streaming = (o: BinlogOffset): TableProgress => ({ phase: 'streaming', offset: o });
const snapshotting = (...hws: BinlogOffset[]): TableProgress => ({
  phase: 'snapshot',
  snapshot: { chunks: ['c0', 'c1', 'c2'], finished: new Map(hws.map((h, i) => [`c${i}`, serializeOffset(h)])), rows: 10 },
});
const identity = { serverId: 1 };

describe('purged binlog check', () => {
  it('a table resumes from its offset, or from its finished chunks while it snapshots; a fresh table from nothing', () => {
    expect(resumePoints(undefined)).toEqual([]);
    expect(resumePoints(streaming(at('binlog.000002', 120)))).toEqual([at('binlog.000002', 120)]);
    expect(resumePoints(snapshotting()).length).toBe(0);
    expect(resumePoints(snapshotting(at('binlog.000001', 9), at('binlog.000003', 4))).map((o) => o.file)).toEqual(['binlog.000001', 'binlog.000003']);
  });

  it('names exactly the tables whose point lies in a file the server no longer lists', () => {
    const tables = [
      table('gone', streaming(at('binlog.000001'))),
      table('kept', streaming(at('binlog.000002'))),
      table('chunk-gone', snapshotting(at('binlog.000002'), at('binlog.000001'))),
      table('chunks-kept', snapshotting(at('binlog.000003'))),
      table('fresh', undefined),
      table('not-started', snapshotting()),
    ];
    const purged = purgedTables(tables, ['binlog.000002', 'binlog.000003'], identity);
    expect(purged.map((p) => [p.table.key, p.offset.file])).toEqual([
      ['db.gone', 'binlog.000001'],
      ['db.chunk-gone', 'binlog.000001'],
    ]);
  });

  it('leaves offsets of another server alone (those resume by GTIDs; the server refuses a purged start itself)', () => {
    expect(purgedTables([table('moved', streaming(at('binlog.000001', 4, 2)))], ['binlog.000009'], identity)).toEqual([]);
  });

  it('the error groups tables at one offset, names the unaffected ones and the exact way out per catalog', () => {
    const tables = [table('a', streaming(at('binlog.000001', 77))), table('b', streaming(at('binlog.000001', 77))), table('c', streaming(at('binlog.000002')))];
    const purged = purgedTables(tables, ['binlog.000002'], identity);
    const fs = purgedTablesError(purged, tables, 'binlog.000002', 'filesystem');
    expect(fs.retryable).toBe(false);
    expect(fs.context).toEqual({ reason: 'binlog-purged', tables: 'db.a,db.b' });
    expect(fs.message).toContain('found it purged for 2 table(s): db.a, db.b at binlog.000001:77 server_id=1;');
    expect(fs.message).toContain("rm -r '/w/lake/db/a'; rm -r '/w/lake/db/b'");
    expect(fs.message).toContain('The other tables (db.c) still have their binlog and resume from their own offsets');
    const s3 = purgedTablesError(purgedTables([table('a', streaming(at('binlog.000001')), 's3://bucket/lake/db/a')], ['binlog.000002'], identity), tables, 'binlog.000002', 'filesystem');
    expect(s3.message).toContain('delete every object under s3://bucket/lake/db/a/');
    const sql = purgedTablesError(purged, tables, 'binlog.000002', 'sql');
    expect(sql.message).toContain('DROP TABLE db.a, db.b in the sql catalog');
    expect(sql.message).not.toContain('rm -r');
  });

  it('a start the server refused (GTIDs on a new primary): the tables at or before it are named, with the way out', () => {
    // offsets of the old primary (server 1) carrying MariaDB GTIDs; the reader asked the new one for the lowest
    const gt = (seq: number): BinlogOffset => ({ file: 'binlog.000004', position: 1000 + seq, serverId: 1, gtids: mariadbGtids(`0-1-${seq}`) });
    const tables = [table('old', streaming(gt(100))), table('older', streaming(gt(90))), table('newer', streaming(gt(300)))];
    const refused = purgedBinlogError(gt(100), 'Could not find GTID state requested by slave in any binlog files');
    const named = withPurgedTables(refused, tables, 'filesystem') as FloeError;
    expect(named).toBeInstanceOf(FloeError);
    expect(named.retryable).toBe(false);
    expect(named.context.tables).toBe('db.old,db.older');
    expect(named.message).toMatch(/^source.mysql.binlog: expected the server to still hold the binlog at binlog.000004:1100 gtid_pos="0-1-100"/);
    expect(named.message).not.toMatch(/source.mysql.binlog: source.mysql.binlog/);
    expect(named.message).toContain("The tables at or before that offset: db.old, db.older. Re-snapshot them: with floe stopped, drop their Iceberg tables (the filesystem catalog keeps a table as its directory: rm -r '/w/lake/db/old'; rm -r '/w/lake/db/older')");
    // any other error, or one already naming its tables, passes through
    const other = new FloeError('source.mysql.binlog', 'source', 'binlog connection failed', { retryable: true });
    expect(withPurgedTables(other, tables, 'filesystem')).toBe(other);
    const listed = purgedTablesError(purgedTables([table('x', streaming(at('binlog.000001')))], ['binlog.000002'], identity), tables, 'binlog.000002', 'filesystem');
    expect(withPurgedTables(listed, tables, 'filesystem')).toBe(listed);
  });
});
