/**
 * The `floe check` line naming the captured tables Spark cannot read: a MySQL TIME column stored as
 * Iceberg `time` makes the whole table unreadable in Spark (Iceberg's TypeToSparkType throws "Spark
 * does not support time fields" for any table whose schema holds one), while Trino, DuckDB, PyIceberg
 * and Iceberg Java read it. `source.timeAs: micros` stores every TIME column as long microseconds,
 * which Spark reads; `source.timeAsMicros` does it per column.
 */
import type { MappedTable } from '../../source/mysql/index.js';
import { tableKey } from '../../source/mysql/index.js';
import type { CheckLine } from './check-line.js';

const SHOWN = 8;

export function sparkTimeCheckLine(tables: readonly MappedTable[]): CheckLine {
  const unreadable = tables
    .map((t) => ({ table: tableKey(t.schema.id), columns: t.columns.filter((c) => c.icebergType === 'time').map((c) => c.column.name) }))
    .filter((t) => t.columns.length > 0);
  if (unreadable.length === 0) {
    return { check: 'source.spark-time', ok: true, severity: 'info', message: 'no captured column is stored as Iceberg time: Spark reads every table' };
  }
  const named = unreadable.slice(0, SHOWN).map((t) => `${t.table} (${t.columns.join(', ')})`);
  const more = unreadable.length > SHOWN ? `, and ${unreadable.length - SHOWN} more` : '';
  const count = unreadable.length === 1 ? '1 captured table has' : `${unreadable.length} captured tables have`;
  return {
    check: 'source.spark-time',
    ok: false,
    severity: 'warning',
    message: `${count} TIME columns stored as Iceberg time, which Spark cannot read (the whole table fails there): ${named.join('; ')}${more}; set source.timeAs: micros to store every TIME column as long microseconds (or list the columns in source.timeAsMicros), then re-snapshot the tables already in the lake`,
  };
}
