/**
 * Where a binlog stream starts, resolved to a concrete `BinlogOffset` — the one place that turns
 * "latest", "earliest", a file/position or a GTID set into an offset. The binlog reader resolves its
 * start with it, and the pipeline resolves the start of a table that is not snapshotted with it
 * (so that the offset can be committed at once and a restart does not move it: a 'latest' resolved
 * again later would skip what came between).
 *
 * - latest: the server's binlog end now (SHOW MASTER/BINARY LOG STATUS, watermark.ts);
 * - earliest: the oldest binlog file the server still lists (SHOW BINARY LOGS), at position 4 (after
 *   the magic number); its GTIDs stay unknown — the stream's first Previous_gtids / GTID_LIST event
 *   seeds them;
 * - file/position or GTIDs given as text: on this server (its identity is attached);
 * - an offset: as it is (it carries the identity of the server it was read on).
 */
import { FloeError } from '../../../util/errors.js';
import type { MysqlClient } from '../client.js';
import type { ServerDialect } from '../dialect.js';
import { mariadbGtids, mysqlGtids, type BinlogOffset, type ServerIdentity } from '../offset/offset.js';
import { listBinlogFiles, readWatermark } from '../snapshot/watermark.js';
import { SUBSYSTEM } from './binlog-errors.js';

export type StartPosition =
  | { readonly kind: 'earliest' }
  | { readonly kind: 'latest' }
  | { readonly kind: 'offset'; readonly offset: BinlogOffset }
  /** A file/position of this server. */
  | { readonly kind: 'file'; readonly file: string; readonly position: number }
  /** A GTID set (MySQL) or GTID position (MariaDB) of this server, as text. */
  | { readonly kind: 'gtid'; readonly gtid: string };

/** The concrete offset `start` stands for on the server behind `client`. */
export async function resolveStartOffset(client: MysqlClient, dialect: ServerDialect, identity: ServerIdentity, start: StartPosition): Promise<BinlogOffset> {
  switch (start.kind) {
    case 'latest':
      return readWatermark(client, dialect, identity);
    case 'earliest': {
      const files = await listBinlogFiles(client);
      if (files.length === 0) throw new FloeError(SUBSYSTEM, 'source', 'SHOW BINARY LOGS returned no file: expected the binary log to be enabled (log_bin)');
      return { file: files[0]!.name, position: 4, ...identity };
    }
    case 'file':
      return { file: start.file, position: start.position, ...identity };
    case 'gtid':
      return { gtids: dialect.flavor === 'mysql' ? mysqlGtids(start.gtid) : mariadbGtids(start.gtid), ...identity };
    case 'offset':
      return start.offset;
  }
}
