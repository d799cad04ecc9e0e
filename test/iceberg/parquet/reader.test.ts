import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalFileIO } from '../../../src/io/local-file-io.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { schemaFromJson } from '../../../src/iceberg/spec/schema-json.js';
import { toJsonSingleValue } from '../../../src/iceberg/spec/single-value.js';
import { Types, type NestedField } from '../../../src/iceberg/spec/types.js';
import { parseJson, stringifyJson } from '../../../src/util/json.js';
import type { Row, Value } from '../../../src/model/values.js';
import { writeParquetFile } from '../../../src/iceberg/parquet/file-writer.js';
import { readParquetBatches, readParquetFileInfo, readParquetRows } from '../../../src/iceberg/parquet/reader.js';
import { GOLDEN_DIR, goldenAvailable } from '../../support/golden.js';

const GOLDEN = GOLDEN_DIR;
const golden = (rel: string) => path.join(GOLDEN, rel);
const bytesOf = (p: string) => new Uint8Array(fs.readFileSync(p));

describe.skipIf(!goldenAvailable)('Parquet reader on Spark/Java-written golden files', () => {
  const eqTable = 'data/persistent/equality_deletes/warehouse/mydb/mytable/data';
  const partTable = 'data/persistent/equality_deletes/warehouse/mydb/mytable_partitioned/data';

  it('reads data files (optional and required int, string, date) by their iceberg.schema', async () => {
    const first = await readParquetRows(bytesOf(golden(`${eqTable}/00000-9-8b7ad7ff-1bf1-4522-9b6b-da181d84a8d6-0-00001.parquet`)));
    // bir is a date: day numbers of 2025-01-01..04.
    expect(first).toEqual([
      [1, 'a', 20089],
      [2, 'b', 20090],
      [3, 'c', 20091],
      [4, 'd', 20092],
    ]);
    const info = await readParquetFileInfo(bytesOf(golden(`${partTable}/name=c/00001-1760585152415-373476a7-2e0e-4faa-a399-c1e9226724b9-00003.parquet`)));
    expect(info.numRows).toBe(1);
    expect(info.hasFieldIds).toBe(true);
    expect(info.icebergSchema!.fields.map((f) => [f.id, f.name, f.required])).toEqual([
      [1, 'id', true],
      [2, 'name', false],
      [3, 'bir', false],
    ]);
  });

  it('reads the equality-delete files, keyed on id, on name, and on both', async () => {
    const read = (rel: string) => readParquetRows(bytesOf(golden(rel)));
    expect(await read(`${eqTable}/delete-242a4468-1e89-489f-aa1b-eafd83a379db.parquet`)).toEqual([[1]]);
    expect(await read(`${eqTable}/delete-93d19556-6cbf-4720-a9a3-3cd5004ad532.parquet`)).toEqual([['b']]);
    expect(await read(`${eqTable}/delete-6b31fafe-0aa5-4197-b4e8-052dbc2afa98.parquet`)).toEqual([[3, 'c']]);
    const both = golden(`${partTable}/name=c/delete-1929bcb5-210d-4b3d-9989-a10234740545.parquet`);
    expect(await read(path.relative(GOLDEN, both))).toEqual([[3, 'c']]);
    const info = await readParquetFileInfo(bytesOf(both));
    expect(info.keyValue.get('delete-type')).toBe('equality');
    expect(info.keyValue.get('delete-field-ids')).toBe('2, 1');
  });

  it('reads through a FileIO and projects a delete file onto the table schema by field id', async () => {
    const io = new LocalFileIO({ baseDir: GOLDEN });
    const table = new Schema(0, [
      { id: 1, name: 'id', required: false, type: Types.int },
      { id: 2, name: 'name', required: false, type: Types.string },
      { id: 3, name: 'bir', required: false, type: Types.date },
    ]);
    const rows = await readParquetRows({ io, path: `${eqTable}/delete-93d19556-6cbf-4720-a9a3-3cd5004ad532.parquet` }, { projection: table });
    expect(rows).toEqual([[null, 'b', null]]);
  });

  it('fills columns added later from initial-default (every primitive type, pyarrow-written files)', async () => {
    const dir = 'data/persistent/add_columns_with_defaults/default.db/add_columns_with_defaults';
    const expected = parseJson(fs.readFileSync(golden('expected.json'), 'utf8'))[dir];
    const metadata = parseJson(fs.readFileSync(golden(`${dir}/${expected.metadata}`), 'utf8'));
    const schema = schemaFromJson(metadata.schemas.find((s: { 'schema-id': number }) => s['schema-id'] === metadata['current-schema-id']));
    const rows: Row[] = [];
    for (const file of fs.readdirSync(golden(`${dir}/data`))) rows.push(...(await readParquetRows(bytesOf(golden(`${dir}/data/${file}`)), { projection: schema })));
    const columns: string[] = expected.columns;
    const asJson = rows.map((row) =>
      columns.map((name) => {
        const f = schema.findFieldByName(name)!;
        const v = row[schema.indexOfTopLevel(f.id)];
        if (v === null) return null;
        // A float column holds float32 values; its default text is the shortest float32 form.
        return stringifyJson(toJsonSingleValue(f.type, f.type.kind === 'float' ? Math.fround(v as number) : v));
      }),
    );
    const want = (expected.final as unknown[][]).map((r) => r.map((v) => stringifyJson(v)));
    const sortKey = (r: unknown[]) => JSON.stringify(r);
    expect(asJson.map(sortKey).sort()).toEqual(want.map(sortKey).sort());
    // uuid: not asserted by the fixture, but the written one and the default must both read as uuid text.
    const uuids = rows.map((r) => r[schema.indexOfTopLevel(13)]);
    expect(uuids).toContain('f79c3e09-677c-4bbd-a479-3f349cb785e7');
    expect(uuids.every((u) => typeof u === 'string' && /^[0-9a-f-]{36}$/.test(u))).toBe(true);
  });
});

describe('Parquet reader: projection, defaults, promotion', () => {
  const written = new Schema(0, [
    { id: 1, name: 'a', required: true, type: Types.int },
    { id: 2, name: 'b', required: false, type: Types.string },
    { id: 3, name: 'c', required: false, type: Types.float },
    { id: 4, name: 'd', required: false, type: Types.decimal(5, 2) },
    { id: 5, name: 'e', required: false, type: Types.date },
    {
      id: 6,
      name: 's',
      required: false,
      type: { kind: 'struct', fields: [{ id: 7, name: 'x', required: false, type: Types.int }] },
    },
  ]);
  const rows: Row[] = [
    [1, 'one', 1.5, '123.45', -1, [7]],
    [-2, null, null, '-0.01', 0, null],
  ] as unknown as Row[];

  it('matches columns by id across renames and reorders, applies int→long, float→double, decimal widening, date→timestamp', async () => {
    const { bytes } = await writeParquetFile(written, rows);
    const read: NestedField[] = [
      { id: 4, name: 'amount', required: false, type: Types.decimal(12, 2) },
      { id: 2, name: 'renamed_b', required: false, type: Types.string },
      { id: 1, name: 'a', required: true, type: Types.long },
      { id: 3, name: 'c', required: false, type: Types.double },
      { id: 5, name: 'e', required: false, type: Types.timestamp },
      {
        id: 6,
        name: 's',
        required: false,
        type: {
          kind: 'struct',
          fields: [
            { id: 8, name: 'added', required: false, type: Types.string, initialDefault: 'dflt' },
            { id: 7, name: 'x', required: false, type: Types.long },
          ],
        },
      },
      { id: 9, name: 'new_with_default', required: true, type: Types.long, initialDefault: 42n },
      { id: 10, name: 'new_optional', required: false, type: Types.string },
    ];
    expect(await readParquetRows(bytes, { projection: read })).toEqual([
      ['123.45', 'one', 1n, 1.5, -86_400_000_000n, ['dflt', 7n], 42n, null],
      ['-0.01', null, -2n, null, 0n, null, 42n, null],
    ]);
  });

  it('refuses a required column the file lacks without a default, and types that are not promotions', async () => {
    const { bytes } = await writeParquetFile(written, rows);
    await expect(readParquetRows(bytes, { projection: [{ id: 20, name: 'must', required: true, type: Types.int }] })).rejects.toThrow(/required field must \(id 20\) is not in the data file/);
    await expect(readParquetRows(bytes, { projection: [{ id: 2, name: 'b', required: false, type: Types.int }] })).rejects.toThrow(/column b: the file holds Utf8, which cannot be read as int/);
    await expect(readParquetRows(bytes, { projection: [{ id: 4, name: 'd', required: false, type: Types.decimal(12, 3) }] })).rejects.toThrow(/cannot be read as decimal\(12, 3\)/);
    await expect(readParquetRows(bytes, { projection: [{ id: 1, name: 'a', required: true, type: Types.float }] })).rejects.toThrow(/cannot be read as float/);
  });

  it('reads only default columns when no requested column is in the file, with exact row counts', async () => {
    const { bytes } = await writeParquetFile(written, rows);
    expect(await readParquetRows(bytes, { projection: [{ id: 30, name: 'z', required: false, type: Types.int, initialDefault: 5 }] })).toEqual([[5], [5]]);
  });

  it('streams batches with their file positions', async () => {
    const schema = new Schema(0, [{ id: 1, name: 'k', required: true, type: Types.long }]);
    const many: Row[] = Array.from({ length: 2500 }, (_, i) => [BigInt(i)]);
    const { bytes } = await writeParquetFile(schema, many, { rowGroupRows: 1000 });
    const seen: Array<[number, number]> = [];
    for await (const b of readParquetBatches(bytes, { batchRows: 600 })) {
      seen.push([b.firstPosition, b.rows.length]);
      b.rows.forEach((r, i) => expect(r[0]).toBe(BigInt(b.firstPosition + i)));
    }
    expect(seen.reduce((n, [, len]) => n + len, 0)).toBe(2500);
    expect(seen[0][0]).toBe(0);
    for (let i = 1; i < seen.length; i++) expect(seen[i][0]).toBe(seen[i - 1][0] + seen[i - 1][1]);
  });

  it('falls back to names only for files without any field id', async () => {
    // A Parquet file as a non-Iceberg tool writes it: no PARQUET:field_id anywhere.
    const table = new arrow.Table({
      name: arrow.vectorFromArray(['p', 'q'], new arrow.Utf8()),
      qty: arrow.vectorFromArray([3, 4], new arrow.Int32()),
    });
    const ipc = arrow.tableToIPC(table, 'stream');
    const bytes = pw.writeParquet(pw.Table.fromIPCStream(ipc));
    const info = await readParquetFileInfo(bytes);
    expect(info.hasFieldIds).toBe(false);
    const projection: NestedField[] = [
      { id: 100, name: 'qty', required: false, type: Types.long },
      { id: 101, name: 'name', required: false, type: Types.string },
      { id: 102, name: 'other', required: false, type: Types.string },
    ];
    expect(await readParquetRows(bytes, { projection })).toEqual([
      [3n, 'p', null],
      [4n, 'q', null],
    ]);
    // With ids present, a name match alone is not a match (Java ReadConf): an id-less column reads as null.
    const withIds = await writeParquetFile(new Schema(0, [{ id: 1, name: 'qty', required: false, type: Types.int }]), [[9]]);
    expect(await readParquetRows(withIds.bytes, { projection: [{ id: 2, name: 'qty', required: false, type: Types.int }] })).toEqual([[null]]);
  });
});

describe('Parquet reader: through LocalFileIO', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'floe-parquet-reader-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads a written file by path', async () => {
    const io = new LocalFileIO();
    const schema = new Schema(0, [{ id: 1, name: 'v', required: false, type: Types.string }]);
    const { bytes } = await writeParquetFile(schema, [['x'], [null]]);
    const p = `file://${dir}/f.parquet`;
    await io.write(p, bytes);
    const rows: Value[][] = await readParquetRows({ io, path: p });
    expect(rows).toEqual([['x'], [null]]);
  });
});
