/**
 * A table that a DDL changes while its snapshot is read. The chunks are read with the table's mapping
 * of when the snapshot began; a chunk read after the DDL holds the rows in a layout that mapping does
 * not describe (a column added is missing from the SELECT, a widened one is converted as before), and
 * the binlog rows of its window decode wrongly. So every chunk is checked: after its high watermark
 * (everything up to it is in the chunk), the table's columns as the server lists them now must be
 * those it listed when the snapshot began reading the table — names and types (`signature`). A
 * difference, or a server refusing the chunk because the table changed (an unknown column, a dropped
 * or renamed table, a consistent snapshot the DDL invalidated), fails the snapshot with a retryable
 * error: floe starts again from the lake, which applies the DDL at its place in the binlog before
 * the remaining chunks are read with the definition it left (hybrid-phases.ts `catchUp`), or — nothing of
 * the table copied yet — copies it from the start with the new definition.
 *
 * What this does not see: a DDL between the session's capture of the table and its first chunk that
 * keeps every column name (a type change); the pipeline finds such a statement at the hand-over, where
 * the snapshot straddles it (pipeline/ddl-relation.ts).
 */
import { errorMessage, FloeError } from '../../../util/errors.js';
import { mysqlErrorCode, quoteString, type MysqlClient } from '../client.js';
import { tableKey } from '../schema/table-schema.js';
import type { MappedTable } from '../schema/type-mapping.js';

const SUBSYSTEM = 'source.mysql.snapshot';

/** What the server answers a chunk read of a table a DDL changed (or dropped, or renamed) since the plan. */
const TABLE_CHANGED = new Set(['ER_BAD_FIELD_ERROR', 'ER_NO_SUCH_TABLE', 'ER_TABLE_DEF_CHANGED']);

function changed(table: MappedTable, detail: string, cause?: unknown): FloeError {
  return new FloeError(SUBSYSTEM, 'source', `table ${tableKey(table.schema.id)} changed while its snapshot was read (${detail}); floe starts again from the lake, which applies the DDL where the binlog has it`, { retryable: true, ...(cause === undefined ? {} : { cause }) });
}

/** The retryable error for a chunk read the server refused because its table changed; undefined for any other failure. */
export function changedDuringSnapshot(table: MappedTable, e: unknown): FloeError | undefined {
  const code = mysqlErrorCode(e);
  if (code !== undefined && TABLE_CHANGED.has(code)) return changed(table, errorMessage(e), e);
  // a binlog row of the chunk's window in a layout the mapping does not have (row-decoder.ts)
  if (e instanceof FloeError && e.subsystem === 'source.mysql.binlog' && e.kind === 'invalid-data') return changed(table, errorMessage(e), e);
  return undefined;
}

/**
 * The table's columns as the server lists them, in ordinal order (none when it is gone), and their
 * `name type` signature. The names are kept as the server returns them, not parsed back out of the
 * signature: a type holds spaces and commas of its own (`tinyint unsigned`, `enum('b,c','x y')`).
 */
async function columnsNow(client: MysqlClient, table: MappedTable): Promise<{ names: string[]; signature: string }> {
  const { database, table: name } = table.schema.id;
  const rows = await client.query<{ n: unknown; t: unknown }>(
    `SELECT COLUMN_NAME AS n, COLUMN_TYPE AS t FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ${quoteString(database)} AND TABLE_NAME = ${quoteString(name)} ORDER BY ORDINAL_POSITION`,
  );
  return { names: rows.map((r) => String(r.n).toLowerCase()), signature: rows.map((r) => `${String(r.n)} ${String(r.t).toLowerCase()}`).join(', ') };
}

export class TableChangeGuard {
  /** Per table: its signature when the snapshot began reading it. */
  private readonly baselines = new Map<string, Promise<string>>();

  /** Throws the retryable error when the table's columns are no longer those the snapshot began with. */
  async check(client: MysqlClient, table: MappedTable): Promise<void> {
    const key = tableKey(table.schema.id);
    let baseline = this.baselines.get(key);
    if (!baseline) {
      baseline = columnsNow(client, table).then(({ names, signature }) => {
        const mapped = table.columns.map((c) => c.column.name.toLowerCase());
        if (names.join(',') !== mapped.join(',')) throw changed(table, `the snapshot reads the columns (${mapped.join(', ')}), the server has (${names.join(', ')})`);
        return signature;
      });
      this.baselines.set(key, baseline);
    }
    const before = await baseline;
    const now = (await columnsNow(client, table)).signature;
    if (now !== before) throw changed(table, `its columns were (${before}), now (${now || 'none: the table is gone'})`);
  }
}
