/**
 * Schemas of delete files (format/spec.md "Delete Formats"):
 *
 * - position deletes: `file_path` (id 2147483546, required string) and `pos` (id 2147483545, required
 *   long), rows sorted by file_path then pos; the deprecated `row` column is not written (spec
 *   Appendix E; docs/iceberg-writer-checklist.md §4.4). Java keeps full (untruncated) metrics for both columns
 *   (`MetricsConfig.forPositionDelete`), which lets readers see the referenced data file in the bounds.
 * - equality deletes: a projection of the table schema to the equality field ids, keeping the table's
 *   field ids, names, types and nesting (docs/iceberg-writer-checklist.md §4.2). Java's writer also records
 *   `delete-type=equality` and `delete-field-ids` in the key-value metadata (seen in Spark-written files).
 */
import { FloeError } from '../../util/errors.js';
import type { Row } from '../../model/values.js';
import { Schema } from '../spec/schema.js';
import { Types, isPrimitive, type IcebergType, type NestedField } from '../spec/types.js';
import { isEqualityFieldType } from '../spec/primitive-behaviour.js';
import { compareStrings } from '../spec/value-compare.js';
import { MetricsModes, type MetricsConfig } from './metrics-config.js';

const SUBSYSTEM = 'iceberg.parquet';

/** Reserved field ids (spec "Reserved Field IDs"). */
export const DELETE_FILE_PATH_ID = 2147483546;
export const DELETE_FILE_POS_ID = 2147483545;

export const POSITION_DELETE_SCHEMA = new Schema(0, [
  { id: DELETE_FILE_PATH_ID, name: 'file_path', required: true, type: Types.string, doc: 'Path of a file in which a deleted row is stored' },
  { id: DELETE_FILE_POS_ID, name: 'pos', required: true, type: Types.long, doc: 'Ordinal position of a deleted row in the data file' },
]);

/** Java `MetricsConfig.forPositionDelete`: full metrics for file_path and pos. */
export function positionDeleteMetricsConfig(): MetricsConfig {
  return {
    defaultMode: MetricsModes.full,
    columnModes: new Map([
      [DELETE_FILE_PATH_ID, MetricsModes.full],
      [DELETE_FILE_POS_ID, MetricsModes.full],
    ]),
  };
}

export interface PositionDelete {
  filePath: string;
  pos: bigint;
}

/** Position deletes as rows of POSITION_DELETE_SCHEMA, sorted by path (code point order) then pos. */
export function positionDeleteRows(deletes: Iterable<PositionDelete>): Row[] {
  const sorted = [...deletes].sort((a, b) => compareStrings(a.filePath, b.filePath) || (a.pos < b.pos ? -1 : a.pos > b.pos ? 1 : 0));
  return sorted.map((d) => [d.filePath, d.pos]);
}

/**
 * The delete schema of an equality-delete file: the table schema pruned to `equalityIds` (and the
 * structs that contain them), ids kept. Equality columns must be primitive, not float/double, and not
 * inside a list or map (spec: same rules as identifier fields, except that optional is allowed).
 */
export function equalityDeleteSchema(table: Schema, equalityIds: readonly number[]): Schema {
  if (equalityIds.length === 0) {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', 'an equality-delete file needs at least one equality field id');
  }
  const wanted = new Set(equalityIds);
  for (const id of wanted) {
    const f = table.findField(id);
    if (!f) throw new FloeError(SUBSYSTEM, 'invalid-argument', `equality field id ${id} is not in schema ${table.schemaId}`);
    if (!isEqualityFieldType(f.type)) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `equality field ${f.name} (id ${id}) is ${typeDesc(f.type)}; equality deletes need primitive, non-float columns`);
    }
  }
  const found = new Set<number>();
  const prune = (fields: readonly NestedField[]): NestedField[] => {
    const out: NestedField[] = [];
    for (const f of fields) {
      if (wanted.has(f.id)) {
        out.push(f);
        found.add(f.id);
      } else if (f.type.kind === 'struct') {
        const children = prune(f.type.fields);
        if (children.length > 0) out.push({ ...f, type: { kind: 'struct', fields: children } });
      }
    }
    return out;
  };
  const fields = prune(table.fields);
  for (const id of wanted) {
    if (!found.has(id)) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `equality field id ${id} is inside a list or map; equality deletes cannot use such fields`);
    }
  }
  return new Schema(table.schemaId, fields);
}

/** Java's extra key-value entries on equality-delete files. */
export function equalityDeleteKeyValue(equalityIds: readonly number[]): Record<string, string> {
  return { 'delete-type': 'equality', 'delete-field-ids': equalityIds.join(', ') };
}

/** Java's extra key-value entry on position-delete files. */
export const POSITION_DELETE_KEY_VALUE: Readonly<Record<string, string>> = Object.freeze({ 'delete-type': 'position' });

function typeDesc(t: IcebergType): string {
  return isPrimitive(t) ? t.kind : `a ${t.kind}`;
}
