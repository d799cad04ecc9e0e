/**
 * The parts of a Parquet file that depend only on the Iceberg schema, made once per schema
 * (schemas are immutable; every file of a table writes with the same one): the Arrow schema with
 * every field id, the `iceberg.schema` text, and the Arrow IPC schema message that opens each
 * batch's stream to the encoder (file-writer.ts) — encoding that flatbuffer per batch was half the
 * cost of a small batch's IPC.
 */
import * as arrow from 'apache-arrow';
import { stringifyJson } from '../../util/json.js';
import type { Schema } from '../spec/schema.js';
import { schemaToJson } from '../spec/schema-json.js';
import { toArrowSchema } from './arrow-schema.js';

/** What a file of a schema needs that depends only on the schema. */
export interface SchemaParts {
  arrowSchema: arrow.Schema;
  structType: arrow.Struct;
  icebergSchemaJson: string;
  /** The Arrow IPC schema message that opens every batch's IPC stream. */
  schemaMessage: Uint8Array;
}

/**
 * The Arrow IPC stream of one record batch, as `arrow.tableToIPC(table, 'stream')` writes it, except
 * that the schema message is given (encoded once per schema): encoding the schema's flatbuffer with
 * every field's `PARQUET:field_id` metadata is half the cost of a small batch's IPC.
 */
export class CachedSchemaStreamWriter extends arrow.RecordBatchStreamWriter {
  constructor(private readonly schemaMessage: Uint8Array) {
    super();
  }

  protected override _writeSchema(): this {
    return this._write(this.schemaMessage);
  }
}

/**
 * An encapsulated IPC message (Arrow columnar format, "Encapsulated message format"): the continuation
 * marker 0xFFFFFFFF, the flatbuffer's length with padding, the flatbuffer, padding to 8 bytes — as
 * arrow-js' `RecordBatchWriter._writeMessage` frames it.
 */
function schemaMessageBytes(schema: arrow.Schema): Uint8Array {
  const flatbuffer = arrow.Message.encode(arrow.Message.from(schema));
  const aligned = (flatbuffer.byteLength + 8 + 7) & ~7;
  const out = new Uint8Array(aligned);
  const view = new DataView(out.buffer);
  view.setInt32(0, -1, true);
  view.setInt32(4, aligned - 8, true);
  out.set(flatbuffer, 8);
  return out;
}

/** Schemas are immutable; every file of a table writes with the same one. */
const schemaParts = new WeakMap<Schema, SchemaParts>();

export function schemaPartsOf(schema: Schema): SchemaParts {
  let parts = schemaParts.get(schema);
  if (!parts) {
    const arrowSchema = toArrowSchema(schema);
    parts = {
      arrowSchema,
      structType: new arrow.Struct(arrowSchema.fields),
      icebergSchemaJson: stringifyJson(schemaToJson(schema)),
      schemaMessage: schemaMessageBytes(arrowSchema),
    };
    schemaParts.set(schema, parts);
  }
  return parts;
}

/** The chunks as one array (the encoded file, whose FileIO write takes a whole object). */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const c of chunks) total += c.length;
  const out = new Uint8Array(total);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}
