/**
 * What the writer reads back from the Parquet footer it just produced: per-column compressed sizes
 * and row-group start offsets for the manifest (`column_sizes`, `split_offsets`), the row count, and
 * the field ids of the leaf columns.
 *
 * Java computes the same from the footer: `column_sizes` sums `ColumnChunkMetaData.getTotalSize()`
 * (compressed) per field id over all row groups (`ParquetMetrics.columnSizes`); `split_offsets` are
 * the row groups' starting positions, sorted (`ParquetUtil.getSplitOffsets`, `BlockMetaData.
 * getStartingPos`: the first column's dictionary page, else its first data page). The tests check
 * these figures against hyparquet's full footer parser (test/support/parquet-footer.ts).
 */
import { FloeError } from '../../util/errors.js';

const SUBSYSTEM = 'iceberg.parquet';

/** What a writer needs from the footer of a file it just wrote (`summarizeFooter`). */
export interface FooterSummary {
  numRows: bigint;
  /** Leaf columns in file order: dotted path and field id (undefined when the file has none). */
  leaves: Array<{ path: string; fieldId: number | undefined }>;
  /** Compressed bytes per field id, summed over row groups. */
  columnSizes: Map<number, bigint>;
  /** Starting offset of each row group, ascending. */
  splitOffsets: bigint[];
}

/**
 * The column sizes, split offsets, row count and leaves of the footer, read straight from the
 * footer's Thrift compact encoding (parquet-format `FileMetaData`): only the fields used are decoded
 * and the rest skipped, without decoding its strings (the key-value metadata alone — `ARROW:schema`,
 * `iceberg.schema` — is several KB per file) or building objects for statistics. A writer reads the
 * footer of every file it writes, and a partitioned table writes many small ones.
 *
 * Column chunks of a row group come in the order of the schema's leaves (parquet-format: "This list
 * must have the same order as the SchemaElement list"), so a chunk's field id is its leaf's.
 */
export function summarizeFooter(bytes: Uint8Array): FooterSummary {
  const n = bytes.length;
  if (n < 12 || bytes[n - 4] !== 0x50 || bytes[n - 3] !== 0x41 || bytes[n - 2] !== 0x52 || bytes[n - 1] !== 0x31) {
    throw new FloeError(SUBSYSTEM, 'invalid-data', `not a Parquet file (${n} bytes): no PAR1 magic at the end`);
  }
  const length = bytes[n - 8]! | (bytes[n - 7]! << 8) | (bytes[n - 6]! << 16) | (bytes[n - 5]! << 24);
  if (length <= 0 || length > n - 12) throw new FloeError(SUBSYSTEM, 'invalid-data', `Parquet footer length ${length} does not fit a file of ${n} bytes`);
  try {
    return readFileMetaData(new CompactReader(bytes, n - 8 - length, n - 8));
  } catch (e) {
    if (e instanceof FloeError) throw e;
    throw new FloeError(SUBSYSTEM, 'invalid-data', `not a readable Parquet footer (${n} bytes): ${String(e)}`, { cause: e });
  }
}

// Thrift compact protocol types (thrift's TCompactProtocol).
const T_STOP = 0;
const T_TRUE = 1;
const T_FALSE = 2;
const T_BYTE = 3;
const T_I16 = 4;
const T_I32 = 5;
const T_I64 = 6;
const T_DOUBLE = 7;
const T_BINARY = 8;
const T_LIST = 9;
const T_SET = 10;
const T_MAP = 11;
const T_STRUCT = 12;

const utf8 = new TextDecoder('utf-8');

class CompactReader {
  constructor(
    private readonly bytes: Uint8Array,
    public pos: number,
    private readonly end: number,
  ) {}

  byte(): number {
    if (this.pos >= this.end) throw new Error('footer ends early');
    return this.bytes[this.pos++]!;
  }

  /** An unsigned varint, as a number (exact below 2^53: offsets and sizes of any real file). */
  varint(): number {
    let result = 0;
    let factor = 1;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * factor;
      if ((b & 0x80) === 0) return result;
      factor *= 128;
      if (factor > 2 ** 63) throw new Error('varint too long');
    }
  }

  /** A zigzag varint (i16, i32, i64). */
  int(): number {
    const v = this.varint();
    return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
  }

  binaryLength(): number {
    const len = this.varint();
    if (this.pos + len > this.end) throw new Error('footer ends inside a string');
    return len;
  }

  string(): string {
    const len = this.binaryLength();
    const s = utf8.decode(this.bytes.subarray(this.pos, this.pos + len));
    this.pos += len;
    return s;
  }

  /** Reads a field header; undefined at the struct's end. `last` is the previous field id. */
  field(last: number): { id: number; type: number } | undefined {
    const b = this.byte();
    const type = b & 0x0f;
    if (type === T_STOP) return undefined;
    const delta = b >> 4;
    return { id: delta === 0 ? this.int() : last + delta, type };
  }

  listHeader(): { size: number; type: number } {
    const b = this.byte();
    const size = b >> 4;
    return { size: size === 15 ? this.varint() : size, type: b & 0x0f };
  }

  skip(type: number): void {
    switch (type) {
      case T_TRUE:
      case T_FALSE:
        return;
      case T_BYTE:
        this.pos++;
        return;
      case T_I16:
      case T_I32:
      case T_I64:
        this.varint();
        return;
      case T_DOUBLE:
        this.pos += 8;
        return;
      case T_BINARY: {
        const len = this.binaryLength(); // first: `pos += binaryLength()` would add to the pos before the length
        this.pos += len;
        return;
      }
      case T_LIST:
      case T_SET: {
        const { size, type: element } = this.listHeader();
        // booleans in a list take a byte each
        for (let i = 0; i < size; i++) element === T_TRUE || element === T_FALSE ? this.pos++ : this.skip(element);
        return;
      }
      case T_MAP: {
        const size = this.varint();
        if (size === 0) return;
        const kv = this.byte();
        for (let i = 0; i < size; i++) {
          this.skip(kv >> 4);
          this.skip(kv & 0x0f);
        }
        return;
      }
      case T_STRUCT: {
        let last = 0;
        for (let f = this.field(last); f; f = this.field(last)) {
          last = f.id;
          this.skip(f.type);
        }
        return;
      }
      default:
        throw new Error(`unknown Thrift compact type ${type}`);
    }
  }

  expect(type: number, wanted: number, what: string): void {
    if (type !== wanted) throw new Error(`${what}: unexpected Thrift type ${type}`);
  }
}

function readFileMetaData(r: CompactReader): FooterSummary {
  let numRows: number | undefined;
  let schema: { name: string; numChildren: number; fieldId: number | undefined }[] = [];
  const rowGroups: { sizes: number[]; start: number | undefined }[] = [];
  let last = 0;
  for (let f = r.field(last); f; f = r.field(last)) {
    last = f.id;
    if (f.id === 2 && f.type === T_LIST) {
      const { size, type } = r.listHeader();
      r.expect(type, T_STRUCT, 'schema');
      schema = new Array(size);
      for (let i = 0; i < size; i++) schema[i] = readSchemaElement(r);
    } else if (f.id === 3 && f.type === T_I64) {
      numRows = r.int();
    } else if (f.id === 4 && f.type === T_LIST) {
      const { size, type } = r.listHeader();
      r.expect(type, T_STRUCT, 'row_groups');
      for (let i = 0; i < size; i++) rowGroups.push(readRowGroup(r));
    } else {
      r.skip(f.type);
    }
  }
  if (numRows === undefined) throw new Error('FileMetaData has no num_rows');
  const leaves = leafPaths(schema);
  const columnSizes = new Map<number, bigint>();
  for (const rg of rowGroups) {
    for (let c = 0; c < rg.sizes.length; c++) {
      const id = leaves[c]?.fieldId;
      if (id === undefined) continue;
      columnSizes.set(id, (columnSizes.get(id) ?? 0n) + BigInt(rg.sizes[c]!));
    }
  }
  const splitOffsets = rowGroups.flatMap((rg) => (rg.start === undefined ? [] : [BigInt(rg.start)]));
  splitOffsets.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { numRows: BigInt(numRows), leaves, columnSizes, splitOffsets };
}

function readSchemaElement(r: CompactReader): { name: string; numChildren: number; fieldId: number | undefined } {
  let name = '';
  let numChildren = 0;
  let fieldId: number | undefined;
  let last = 0;
  for (let f = r.field(last); f; f = r.field(last)) {
    last = f.id;
    if (f.id === 4 && f.type === T_BINARY) name = r.string();
    else if (f.id === 5 && f.type === T_I32) numChildren = r.int();
    else if (f.id === 9 && f.type === T_I32) fieldId = r.int();
    else r.skip(f.type);
  }
  return { name, numChildren, fieldId };
}

/** A row group's compressed size per column chunk and its start (as `splitOffsets` takes it). */
function readRowGroup(r: CompactReader): { sizes: number[]; start: number | undefined } {
  const sizes: number[] = [];
  let start: number | undefined;
  let last = 0;
  for (let f = r.field(last); f; f = r.field(last)) {
    last = f.id;
    if (f.id === 1 && f.type === T_LIST) {
      const { size, type } = r.listHeader();
      r.expect(type, T_STRUCT, 'columns');
      for (let i = 0; i < size; i++) {
        const chunk = readColumnChunk(r);
        sizes.push(chunk.compressed);
        if (i === 0 && chunk.dataPage !== undefined) {
          const dict = chunk.dictionaryPage;
          start = dict !== undefined && dict > 0 && dict < chunk.dataPage ? dict : chunk.dataPage;
        }
      }
    } else {
      r.skip(f.type);
    }
  }
  return { sizes, start };
}

function readColumnChunk(r: CompactReader): { compressed: number; dataPage: number | undefined; dictionaryPage: number | undefined } {
  let out = { compressed: 0, dataPage: undefined as number | undefined, dictionaryPage: undefined as number | undefined };
  let last = 0;
  for (let f = r.field(last); f; f = r.field(last)) {
    last = f.id;
    if (f.id === 3 && f.type === T_STRUCT) out = readColumnMetaData(r);
    else r.skip(f.type);
  }
  return out;
}

function readColumnMetaData(r: CompactReader): { compressed: number; dataPage: number | undefined; dictionaryPage: number | undefined } {
  let compressed = 0;
  let dataPage: number | undefined;
  let dictionaryPage: number | undefined;
  let last = 0;
  for (let f = r.field(last); f; f = r.field(last)) {
    last = f.id;
    if (f.id === 7 && f.type === T_I64) compressed = r.int();
    else if (f.id === 9 && f.type === T_I64) dataPage = r.int();
    else if (f.id === 11 && f.type === T_I64) dictionaryPage = r.int();
    else r.skip(f.type);
  }
  return { compressed, dataPage, dictionaryPage };
}

/** Dotted paths and field ids of the leaves of a flattened schema (element 0 is the root). */
function leafPaths(schema: readonly { name: string; numChildren: number; fieldId: number | undefined }[]): FooterSummary['leaves'] {
  const leaves: FooterSummary['leaves'] = [];
  let index = 1;
  const walk = (prefix: string, count: number): void => {
    for (let i = 0; i < count; i++) {
      const element = schema[index++];
      if (!element) throw new FloeError(SUBSYSTEM, 'invalid-data', 'Parquet schema ends before all declared children');
      const path = prefix ? `${prefix}.${element.name}` : element.name;
      if (element.numChildren > 0) walk(path, element.numChildren);
      else leaves.push({ path, fieldId: element.fieldId });
    }
  };
  walk('', schema[0]?.numChildren ?? 0);
  return leaves;
}
