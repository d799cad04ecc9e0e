/**
 * Reads a Parquet file with hyparquet — an implementation independent of floe's reader (arrow-rs via
 * parquet-wasm) — into floe's value model, converting only what hyparquet leaves raw:
 * decimal annotations are stripped so unscaled integers come through exactly (hyparquet would turn them
 * into lossy numbers), timestamps and dates come through as raw integers, binaries stay bytes.
 */
import { parquetMetadata, parquetReadObjects, type FileMetaData, type SchemaElement } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { formatDecimal, type Value } from '../../../src/model/values.js';
import { uuidFromBytes } from '../../../src/iceberg/spec/single-value.js';
import type { IcebergType, NestedField } from '../../../src/iceberg/spec/types.js';

export function footerOf(bytes: Uint8Array): FileMetaData {
  return parquetMetadata(bytes);
}

/** Schema elements by field id (leaves and groups). */
export function elementsById(md: FileMetaData): Map<number, SchemaElement> {
  const out = new Map<number, SchemaElement>();
  for (const e of md.schema) if (e.field_id !== undefined) out.set(e.field_id, e);
  return out;
}

function unscaled(raw: unknown): bigint {
  if (typeof raw === 'bigint') return raw;
  if (typeof raw === 'number') return BigInt(raw);
  const b = raw as Uint8Array;
  let x = 0n;
  for (const byte of b) x = (x << 8n) | BigInt(byte);
  return BigInt.asIntN(8 * b.length, x);
}

function toModel(type: IcebergType, raw: unknown): unknown {
  if (raw === null || raw === undefined) return null;
  switch (type.kind) {
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return BigInt(raw as bigint);
    case 'date':
    case 'int':
      return Number(raw);
    case 'decimal':
      return formatDecimal(unscaled(raw), type.scale);
    case 'uuid':
      return uuidFromBytes(raw as Uint8Array);
    case 'fixed':
    case 'binary':
      return new Uint8Array(raw as Uint8Array);
    case 'string':
      return typeof raw === 'string' ? raw : new TextDecoder().decode(raw as Uint8Array);
    case 'struct': {
      const o = raw as Record<string, unknown>;
      return type.fields.filter((f) => f.type.kind !== 'unknown').map((f) => toModel(f.type, o[f.name]));
    }
    case 'list':
      return (raw as unknown[]).map((v) => toModel(type.element, v));
    case 'map':
      return Object.entries(raw as Record<string, unknown>).map(([k, v]) => [toModel(type.keyType, k), toModel(type.valueType, v)]);
    default:
      return raw;
  }
}

/**
 * Rows as hyparquet reads them, converted to the value model, keyed by physical column name and
 * mapped back to `fields` order by the physical names given.
 */
export async function readWithHyparquet(bytes: Uint8Array, fields: readonly NestedField[], physicalNames: readonly string[]): Promise<Value[][]> {
  const metadata = parquetMetadata(bytes);
  for (const e of metadata.schema) {
    if (e.converted_type === 'DECIMAL' || e.logical_type?.type === 'DECIMAL') {
      delete e.converted_type;
      delete e.logical_type;
    }
  }
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const objects = (await parquetReadObjects({
    file,
    metadata,
    compressors,
    utf8: false,
    parsers: {
      timestampFromMilliseconds: (v: bigint) => v,
      timestampFromMicroseconds: (v: bigint) => v,
      timestampFromNanoseconds: (v: bigint) => v,
      dateFromDays: (v: number) => v,
      stringFromBytes: (b: Uint8Array) => b && new TextDecoder().decode(b),
    } as never,
  })) as Record<string, unknown>[];
  return objects.map((o) => fields.map((f, i) => toModel(f.type, o[physicalNames[i]]) as Value));
}
