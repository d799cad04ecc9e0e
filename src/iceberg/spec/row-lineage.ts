/**
 * Row lineage of format v3 (spec "Row Lineage", "Reserved Field IDs"): the metadata columns
 * `_row_id` (id 2147483540) and `_last_updated_sequence_number` (id 2147483539), both optional longs.
 *
 * A data file may omit them or hold nulls; a reader then inherits the values — `_row_id` = the
 * file's `first_row_id` + the row's position (null when the file has no `first_row_id`, spec "Row
 * Lineage for Upgraded Tables"), `_last_updated_sequence_number` = the data sequence number of the
 * file's manifest entry. A writer that moves an existing row to a new file without modifying it (a
 * compaction) must copy both values into the new file as real columns (spec "Row lineage
 * assignment", rules 1 and 3) — Java's `MetadataColumns.ROW_ID` / `LAST_UPDATED_SEQUENCE_NUMBER`,
 * which Spark's rewrite appends to its write schema (`SparkWriteBuilder`, `schemaWithRowLineage`).
 */
import { Schema } from './schema.js';
import { Types, type NestedField } from './types.js';

const ROW_ID_FIELD_ID = 2147483540;
const LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID = 2147483539;

const ROW_ID_FIELD: NestedField = Object.freeze({ id: ROW_ID_FIELD_ID, name: '_row_id', required: false, type: Types.long, doc: 'Implicit row ID that is automatically assigned' });
const LAST_UPDATED_SEQUENCE_NUMBER_FIELD: NestedField = Object.freeze({
  id: LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID,
  name: '_last_updated_sequence_number',
  required: false,
  type: Types.long,
  doc: 'Sequence number when the row was last updated',
});

/** The two lineage fields, in the order floe appends them to rows: `_row_id`, then `_last_updated_sequence_number`. */
export const ROW_LINEAGE_FIELDS: readonly NestedField[] = Object.freeze([ROW_ID_FIELD, LAST_UPDATED_SEQUENCE_NUMBER_FIELD]);

/** Java `MetadataColumns.schemaWithRowLineage`: the schema with both lineage fields appended. */
export function schemaWithRowLineage(schema: Schema): Schema {
  return new Schema(schema.schemaId, [...schema.fields, ...ROW_LINEAGE_FIELDS], schema.identifierFieldIds);
}
