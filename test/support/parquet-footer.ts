/**
 * The Parquet footer as hyparquet's full metadata parser reads it: the independent reading the tests
 * check floe's own footer summary (src/iceberg/parquet/footer.ts `summarizeFooter`) and the files
 * floe wrote against. `columnSizesById` and `splitOffsets` compute the manifest's `column_sizes` and
 * `split_offsets` as Java does (`ParquetMetrics.columnSizes`, `ParquetUtil.getSplitOffsets`).
 */
import { parquetMetadata, type FileMetaData, type SchemaElement } from 'hyparquet';
import { FloeError } from '../../src/util/errors.js';

const SUBSYSTEM = 'iceberg.parquet';

export interface ParquetFooter {
  metadata: FileMetaData;
  numRows: bigint;
  keyValue: Map<string, string>;
  /** Leaf columns in file order: dotted path and field id (undefined when the file has none). */
  leaves: Array<{ path: string; fieldId: number | undefined; element: SchemaElement }>;
}

export function readFooter(bytes: Uint8Array): ParquetFooter {
  let metadata: FileMetaData;
  try {
    metadata = parquetMetadata(bytes);
  } catch (e) {
    throw new FloeError(SUBSYSTEM, 'invalid-data', `not a readable Parquet footer (${bytes.length} bytes): ${String(e)}`, { cause: e });
  }
  const keyValue = new Map<string, string>();
  for (const kv of metadata.key_value_metadata ?? []) keyValue.set(kv.key, kv.value ?? '');
  return { metadata, numRows: metadata.num_rows, keyValue, leaves: leafColumns(metadata.schema) };
}

/** The codecs of a file's column chunks, each once, sorted (hyparquet's names: 'ZSTD', 'SNAPPY', …). */
export function chunkCodecs(bytes: Uint8Array): string[] {
  return [...new Set(readFooter(bytes).metadata.row_groups.flatMap((g) => g.columns.map((c) => String(c.meta_data?.codec))))].sort();
}

/** Leaves of the flattened Parquet schema (depth-first, the order of column chunks). */
function leafColumns(schema: readonly SchemaElement[]): ParquetFooter['leaves'] {
  const leaves: ParquetFooter['leaves'] = [];
  let index = 1; // element 0 is the root
  const walk = (prefix: string[], count: number): void => {
    for (let i = 0; i < count; i++) {
      const element = schema[index++];
      if (!element) throw new FloeError(SUBSYSTEM, 'invalid-data', 'Parquet schema ends before all declared children');
      const path = [...prefix, element.name];
      if (element.num_children && element.num_children > 0) walk(path, element.num_children);
      else leaves.push({ path: path.join('.'), fieldId: element.field_id, element });
    }
  };
  walk([], schema[0]?.num_children ?? 0);
  return leaves;
}

/** Compressed bytes per field id, summed over row groups (leaves without an id are skipped). */
export function columnSizesById(footer: ParquetFooter): Map<number, bigint> {
  const idByPath = new Map(footer.leaves.map((l) => [l.path, l.fieldId]));
  const sizes = new Map<number, bigint>();
  for (const rg of footer.metadata.row_groups) {
    for (const chunk of rg.columns) {
      const md = chunk.meta_data;
      if (!md) continue;
      const id = idByPath.get(md.path_in_schema.join('.'));
      if (id === undefined) continue;
      sizes.set(id, (sizes.get(id) ?? 0n) + BigInt(md.total_compressed_size));
    }
  }
  return sizes;
}

/** Starting offset of each row group, ascending. */
export function splitOffsets(footer: ParquetFooter): bigint[] {
  const out: bigint[] = [];
  for (const rg of footer.metadata.row_groups) {
    const md = rg.columns[0]?.meta_data;
    if (!md) continue;
    const dict = md.dictionary_page_offset;
    const data = BigInt(md.data_page_offset);
    out.push(dict !== undefined && BigInt(dict) > 0n && BigInt(dict) < data ? BigInt(dict) : data);
  }
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
