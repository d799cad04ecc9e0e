import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalFileIO } from '../../../src/io/local-file-io.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { schemaToJson } from '../../../src/iceberg/spec/schema-json.js';
import { fromBinary, toBinary } from '../../../src/iceberg/spec/single-value.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import { stringifyJson } from '../../../src/util/json.js';
import type { Row } from '../../../src/model/values.js';
import { RollingParquetWriter, defaultLocationProvider } from '../../../src/iceberg/parquet/rolling-writer.js';
import { readParquetFileInfo, readParquetRows } from '../../../src/iceberg/parquet/reader.js';
import {
  DELETE_FILE_PATH_ID,
  DELETE_FILE_POS_ID,
  POSITION_DELETE_KEY_VALUE,
  POSITION_DELETE_SCHEMA,
  equalityDeleteKeyValue,
  equalityDeleteSchema,
  positionDeleteMetricsConfig,
  positionDeleteRows,
} from '../../../src/iceberg/parquet/delete-schemas.js';
import { footerOf } from './hyparquet-raw.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'floe-rolling-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const io = new LocalFileIO();
const tableLocation = `file://${root}/warehouse/db/t`;

const schema = new Schema(1, [
  { id: 1, name: 'id', required: true, type: Types.long },
  { id: 2, name: 'name', required: false, type: Types.string },
  { id: 3, name: 'score', required: false, type: Types.double },
  { id: 4, name: 'day', required: true, type: Types.date },
]);

function rowsFrom(from: number, n: number): Row[] {
  return Array.from({ length: n }, (_, i) => {
    const k = from + i;
    // Pseudo-random text so that zstd cannot make the files vanishingly small.
    const text = `${k}-${((k * 2654435761) >>> 0).toString(36)}-${((k * 40503) >>> 0).toString(16)}`;
    return [BigInt(k), k % 10 === 0 ? null : text, k % 17 === 0 ? NaN : k / 3, 19_000 + (k % 400)];
  });
}

describe('rolling Parquet writer', () => {
  it('rolls to a new file at the target size, each file with its own exact metrics', async () => {
    const target = 48 * 1024;
    const writer = new RollingParquetWriter(schema, {
      io,
      locations: defaultLocationProvider(tableLocation),
      specId: 0,
      partition: [],
      targetFileSizeBytes: target,
      rowGroupBytes: 16 * 1024,
      sortOrderId: 0,
      fileNamePrefix: '00000-7-test',
    });
    const total = 30_000;
    expect(writer.nextRowLocation()).toEqual({ filePath: `${tableLocation}/data/00000-7-test-00001.parquet`, position: 0 });
    const locations = [];
    for (let from = 0; from < total; from += 2_500) locations.push(...(await writer.write(rowsFrom(from, 2_500))));
    const files = await writer.close();

    // Every written row's location, in order: contiguous runs per file, positions from 0 in each file.
    const perFile = new Map<string, number>();
    for (const loc of locations) {
      expect(loc.firstPosition).toBe(perFile.get(loc.filePath) ?? 0);
      perFile.set(loc.filePath, loc.firstPosition + loc.rowCount);
    }
    expect([...perFile.keys()]).toEqual(files.map((f) => f.filePath));
    expect([...perFile.values()]).toEqual(files.map((f) => Number(f.recordCount)));

    expect(files.length).toBeGreaterThanOrEqual(3);
    expect(files.reduce((n, f) => n + f.recordCount, 0n)).toBe(BigInt(total));
    let next = 0;
    for (const [i, f] of files.entries()) {
      expect(f.filePath).toBe(`${tableLocation}/data/00000-7-test-${String(i + 1).padStart(5, '0')}.parquet`);
      expect(f.content).toBe('data');
      expect(f.fileFormat).toBe('PARQUET');
      expect(f.specId).toBe(0);
      expect(f.partition).toEqual([]);
      expect(f.sortOrderId).toBe(0);
      expect(f.equalityIds).toBeUndefined();
      const bytes = await io.read(f.filePath);
      expect(BigInt(bytes.length)).toBe(f.fileSizeInBytes);
      // Rolling is checked every 1000 rows, so a file ends at most one check past the target.
      if (i < files.length - 1) expect(Number(f.fileSizeInBytes)).toBeLessThan(target * 2);

      const rows = await readParquetRows(bytes, { projection: schema });
      const n = Number(f.recordCount);
      expect(rows).toEqual(rowsFrom(next, n));
      expect(f.valueCounts!.get(1)).toBe(f.recordCount);
      expect(f.nullValueCounts!.get(2)).toBe(BigInt(rows.filter((r) => r[1] === null).length));
      expect(f.nanValueCounts!.get(3)).toBe(BigInt(rows.filter((r) => Number.isNaN(r[2])).length));
      expect(f.nanValueCounts!.has(1)).toBe(false);
      expect(fromBinary(Types.long, f.lowerBounds!.get(1)!)).toBe(BigInt(next));
      expect(fromBinary(Types.long, f.upperBounds!.get(1)!)).toBe(BigInt(next + n - 1));
      const scores = rows.map((r) => r[2] as number).filter((x) => !Number.isNaN(x));
      expect(f.lowerBounds!.get(3)).toEqual(toBinary(Types.double, Math.min(...scores)));
      expect(f.upperBounds!.get(3)).toEqual(toBinary(Types.double, Math.max(...scores)));
      const days = rows.map((r) => r[3] as number);
      expect(fromBinary(Types.date, f.lowerBounds!.get(4)!)).toBe(Math.min(...days));
      const md = footerOf(bytes);
      expect(f.splitOffsets).toEqual(md.row_groups.map((g) => BigInt(g.columns[0].meta_data!.dictionary_page_offset ?? g.columns[0].meta_data!.data_page_offset)));
      expect([...f.columnSizes!.keys()].sort()).toEqual([1, 2, 3, 4]);
      next += n;
    }
  });

  it('writes partitioned files under the partition path with the caller’s tuple', async () => {
    const writer = new RollingParquetWriter(schema, {
      io,
      locations: defaultLocationProvider(tableLocation),
      specId: 2,
      partition: [19_000],
      partitionPath: 'day=2022-01-08',
    });
    await writer.write(rowsFrom(0, 10));
    const [file, ...rest] = await writer.close();
    expect(rest).toEqual([]);
    expect(file.filePath).toMatch(new RegExp(`^${tableLocation}/data/day=2022-01-08/00000-0-[0-9a-f-]{36}-00001\\.parquet$`));
    expect(file.specId).toBe(2);
    expect(file.partition).toEqual([19_000]);
    expect(await io.exists(file.filePath)).toBe(true);
  });

  it('writes no file for no rows, and abort deletes what was written', async () => {
    const empty = new RollingParquetWriter(schema, { io, locations: defaultLocationProvider(tableLocation), specId: 0, partition: [] });
    expect(await empty.close()).toEqual([]);

    const aborted = new RollingParquetWriter(schema, {
      io,
      locations: defaultLocationProvider(`${tableLocation}-aborted`),
      specId: 0,
      partition: [],
      targetFileSizeBytes: 8 * 1024,
      rowGroupBytes: 4 * 1024,
    });
    await aborted.write(rowsFrom(0, 5_000));
    expect(aborted.dataFiles.length).toBeGreaterThan(0);
    const paths = aborted.dataFiles.map((f) => f.filePath);
    await aborted.abort();
    for (const p of paths) expect(await io.exists(p)).toBe(false);
  });
});

/** A writer of position-delete files of the unpartitioned spec 0 under `tableLocation`, with `extra` options. */
function positionDeleteWriter(extra: { keyValueMetadata?: Record<string, string>; sortOrderId?: number } = {}): RollingParquetWriter {
  return new RollingParquetWriter(POSITION_DELETE_SCHEMA, {
    io,
    locations: defaultLocationProvider(tableLocation),
    content: 'position-deletes',
    specId: 0,
    partition: [],
    metrics: positionDeleteMetricsConfig(),
    ...extra,
  });
}

describe('delete files', () => {
  it('position deletes: reserved ids, sorted rows, full metrics, referenced data file', async () => {
    const dataPath = `${tableLocation}/data/00000-0-a-very-long-data-file-name-beyond-sixteen.parquet`;
    const writer = positionDeleteWriter({ keyValueMetadata: POSITION_DELETE_KEY_VALUE, sortOrderId: 0 });
    await writer.write(positionDeleteRows([{ filePath: dataPath, pos: 9n }, { filePath: dataPath, pos: 2n }, { filePath: dataPath, pos: 5n }]));
    const [file] = await writer.close();
    expect(file.content).toBe('position-deletes');
    expect(file.sortOrderId).toBeUndefined();
    expect(file.referencedDataFile).toBe(dataPath);
    expect(new TextDecoder().decode(file.upperBounds!.get(DELETE_FILE_PATH_ID))).toBe(dataPath);
    expect(fromBinary(Types.long, file.lowerBounds!.get(DELETE_FILE_POS_ID)!)).toBe(2n);
    expect(fromBinary(Types.long, file.upperBounds!.get(DELETE_FILE_POS_ID)!)).toBe(9n);

    const bytes = await io.read(file.filePath);
    const md = footerOf(bytes);
    expect(md.schema.slice(1).map((e) => [e.name, e.field_id, e.repetition_type, e.type])).toEqual([
      ['file_path', 2147483546, 'REQUIRED', 'BYTE_ARRAY'],
      ['pos', 2147483545, 'REQUIRED', 'INT64'],
    ]);
    const info = await readParquetFileInfo(bytes);
    expect(info.keyValue.get('delete-type')).toBe('position');
    expect(await readParquetRows(bytes)).toEqual([
      [dataPath, 2n],
      [dataPath, 5n],
      [dataPath, 9n],
    ]);
  });

  it('position deletes over several data files are sorted by path then pos and reference none', async () => {
    const rows = positionDeleteRows([
      { filePath: 's3://b/t/data/b.parquet', pos: 1n },
      { filePath: 's3://b/t/data/a.parquet', pos: 7n },
      { filePath: 's3://b/t/data/a.parquet', pos: 3n },
    ]);
    expect(rows).toEqual([
      ['s3://b/t/data/a.parquet', 3n],
      ['s3://b/t/data/a.parquet', 7n],
      ['s3://b/t/data/b.parquet', 1n],
    ]);
    const writer = positionDeleteWriter();
    await writer.write(rows);
    const [file] = await writer.close();
    expect(file.referencedDataFile).toBeUndefined();
  });

  it('equality deletes: the delete schema keeps table ids, iceberg.schema holds it, equality ids are set', async () => {
    const table = new Schema(4, [
      { id: 1, name: 'id', required: true, type: Types.long },
      { id: 2, name: 'payload', required: false, type: Types.string },
      { id: 3, name: 'k', required: false, type: { kind: 'struct', fields: [{ id: 5, name: 'region', required: false, type: Types.string }, { id: 6, name: 'x', required: false, type: Types.int }] } },
      { id: 4, name: 'f', required: false, type: Types.float },
    ]);
    const deleteSchema = equalityDeleteSchema(table, [1, 5]);
    expect(deleteSchema.schemaId).toBe(4);
    expect(deleteSchema.fields.map((f) => f.id)).toEqual([1, 3]);
    expect(deleteSchema.findField(5)!.name).toBe('region');
    expect(deleteSchema.findField(6)).toBeUndefined();
    expect(() => equalityDeleteSchema(table, [4])).toThrow(/equality field f \(id 4\) is float/);
    expect(() => equalityDeleteSchema(table, [3])).toThrow(/is a struct/);
    expect(() => equalityDeleteSchema(table, [77])).toThrow(/not in schema 4/);

    const writer = new RollingParquetWriter(deleteSchema, {
      io,
      locations: defaultLocationProvider(tableLocation),
      content: 'equality-deletes',
      equalityIds: [1, 5],
      specId: 0,
      partition: [],
      keyValueMetadata: equalityDeleteKeyValue([1, 5]),
    });
    await writer.write([
      [7n, ['eu']],
      [8n, null],
    ] as unknown as Row[]);
    const [file] = await writer.close();
    expect(file.content).toBe('equality-deletes');
    expect(file.equalityIds).toEqual([1, 5]);
    const bytes = await io.read(file.filePath);
    const info = await readParquetFileInfo(bytes);
    expect(info.keyValue.get('iceberg.schema')).toBe(stringifyJson(schemaToJson(deleteSchema)));
    expect(info.keyValue.get('delete-field-ids')).toBe('1, 5');
    expect(await readParquetRows(bytes)).toEqual([
      [7n, ['eu']],
      [8n, null],
    ]);
    // Projected onto the table schema by id: the other columns read as null.
    expect(await readParquetRows(bytes, { projection: table })).toEqual([
      [7n, null, ['eu', null], null],
      [8n, null, null, null],
    ]);
  });
});
