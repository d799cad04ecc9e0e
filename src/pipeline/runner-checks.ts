/**
 * Start-up consistency checks of a run. The runner maps the tables before it starts the source (it
 * needs the mapping to find each table's progress), and the source captures them again when its
 * stream starts: a DDL that lands between the two would make the source's rows disagree with the
 * Iceberg mapping, so the two captures are compared once.
 */
import { tableKey } from '../source/mysql/index.js';
import type { MappedTable } from '../source/mysql/index.js';
import { FloeError } from '../util/errors.js';

function shape(t: MappedTable): string {
  return t.columns.map((c) => `${c.column.name}:${c.icebergType}:${c.kind}`).join(',') + `|${t.schema.primaryKey.join(',')}`;
}

/** Throws when the source's capture of a table differs from the runner's. */
export function sameSourceMapping(source: ReadonlyMap<string, MappedTable>, runner: readonly { key: string; mapped: MappedTable }[]): void {
  for (const t of runner) {
    const s = source.get(t.key);
    if (!s || shape(s) !== shape(t.mapped)) {
      throw new FloeError(
        'pipeline',
        'source',
        `table ${tableKey(t.mapped.schema.id)} changed while floe was starting (its definition differs between two reads a moment apart); start floe again`,
      );
    }
  }
}
