/**
 * The files one checkpoint of the upsert writer produces, read back with independent decoders
 * (hyparquet for Parquet, dv-decoder.ts for Puffin/Roaring): equality deletes of the key columns with
 * the `iceberg.schema` entry, position deletes sorted by (path, pos) in v2, deletion vectors — never a
 * position-delete file — in v3, same-checkpoint supersession by position, and the three modes.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { DataFile } from '../../../src/iceberg/spec/data-file.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import { PositionBitmap } from '../../../src/iceberg/puffin/position-bitmap.js';
import { TableChangeWriter, insert, remove, removeKey, update, writeDeletionVectors, type PreparedChanges } from '../../../src/iceberg/writer/index.js';
import { wasmParquetEncoder, type ParquetEncoderFactory } from '../../../src/iceberg/parquet/encoder.js';
import { readTableRows } from '../../../src/iceberg/scan/index.js';
import { commitRowDelta, ensureUnpartitionedSpec, type CatalogTable } from '../../../src/iceberg/table/index.js';
import type { Row } from '../../../src/model/values.js';
import { MemoryKeyIndex } from '../../../src/iceberg/keyindex/memory-key-index.js';
import type { KeyId } from '../../../src/iceberg/keyindex/table-key.js';
import { decodeDeletionVectorBlob, decodePuffin } from './dv-decoder.js';
import { BY_GROUP, localPath, newTable, parquetCodecsOf, parquetColumnNames, parquetKeyValues, parquetRows, readLocal, useTempWarehouse } from './support.js';

const w = useTempWarehouse();

const enc = new TextEncoder();
function row(id: bigint, grp: number, name: string | null, amount: string | null = null): Row {
  return [id, grp, name, amount, name === null ? null : enc.encode(name)];
}

function byContent(files: DataFile[], content: DataFile['content'], format?: DataFile['fileFormat']): DataFile[] {
  return files.filter((f) => f.content === content && (format === undefined || f.fileFormat === format));
}

/** insert 1, insert 2, update 1, delete 2, delete 3 (never written here). */
const SCENARIO = [insert(row(1n, 1, 'a')), insert(row(2n, 1, 'b')), update(row(1n, 1, 'a2'), row(1n, 1, 'a')), remove(row(2n, 1, 'b')), removeKey([3n])];

describe('upsert writer files', () => {
  it('v2: key-only equality deletes with iceberg.schema, and sorted position deletes for rows of this checkpoint', async () => {
    const table = await newTable(w, { formatVersion: 2 });
    const writer = new TableChangeWriter(table);
    expect(writer.mode).toBe('upsert');
    await writer.applyAll(SCENARIO);
    const p = await writer.prepare();

    expect(p.dataFiles).toHaveLength(1);
    const data = p.dataFiles[0];
    expect(data.recordCount).toBe(3n);
    expect((await parquetRows(data.filePath)).map((r) => r.name)).toEqual(['a', 'b', 'a2']);

    const [eq, ...moreEq] = byContent(p.deleteFiles, 'equality-deletes');
    expect(moreEq).toHaveLength(0);
    expect(eq.equalityIds).toEqual([1]);
    expect(eq.specId).toBe(0);
    expect(eq.recordCount).toBe(3n);
    expect(parquetColumnNames(eq.filePath)).toEqual(['id']);
    expect((await parquetRows(eq.filePath)).map((r) => r.id)).toEqual([1n, 2n, 3n]);
    const kv = parquetKeyValues(eq.filePath);
    const deleteSchema = JSON.parse(kv['iceberg.schema']);
    expect(deleteSchema.fields.map((f: { id: number; name: string }) => [f.id, f.name])).toEqual([[1, 'id']]);
    expect(kv['delete-type']).toBe('equality');
    expect(kv['delete-field-ids']).toBe('1');

    const [pos, ...morePos] = byContent(p.deleteFiles, 'position-deletes');
    expect(morePos).toHaveLength(0);
    expect(pos.fileFormat).toBe('PARQUET');
    expect(pos.referencedDataFile).toBe(data.filePath);
    expect(await parquetRows(pos.filePath)).toEqual([
      { file_path: data.filePath, pos: 0n },
      { file_path: data.filePath, pos: 1n },
    ]);
    expect(p.stats).toMatchObject({ changes: 5, rowsWritten: 3, positionDeletes: 2, equalityDeletes: 3 });
    expect(p.writtenPaths.sort()).toEqual([data.filePath, eq.filePath, pos.filePath].sort());
  });

  it('v3: deletion vectors that an independent Puffin/Roaring decoder accepts, and no position-delete file', async () => {
    const table = await newTable(w, { formatVersion: 3 });
    const writer = new TableChangeWriter(table);
    await writer.applyAll(SCENARIO);
    const p = await writer.prepare();
    expect(byContent(p.deleteFiles, 'position-deletes', 'PARQUET')).toEqual([]);
    const dvs = byContent(p.deleteFiles, 'position-deletes', 'PUFFIN');
    expect(dvs).toHaveLength(1);
    const dv = dvs[0];
    const data = p.dataFiles[0];
    expect(dv.referencedDataFile).toBe(data.filePath);
    expect(dv.recordCount).toBe(2n);

    const bytes = readLocal(dv.filePath);
    expect(dv.fileSizeInBytes).toBe(BigInt(bytes.length));
    const puffin = decodePuffin(bytes);
    expect(puffin.blobs).toHaveLength(1);
    const blob = puffin.blobs[0];
    expect(blob.type).toBe('deletion-vector-v1');
    expect(blob.fields).toEqual([2147483645]);
    expect(blob.compressionCodec).toBeUndefined();
    expect(blob.properties['referenced-data-file']).toBe(data.filePath);
    expect(BigInt(blob.offset)).toBe(dv.contentOffset);
    expect(BigInt(blob.length)).toBe(dv.contentSizeInBytes);
    const positions = decodeDeletionVectorBlob(bytes.subarray(blob.offset, blob.offset + blob.length));
    expect(positions).toEqual([0n, 1n]);
    expect(BigInt(blob.properties.cardinality)).toBe(dv.recordCount);
    expect(BigInt(positions.length)).toBe(dv.recordCount);
  });

  it('drops a data file whose rows were all superseded within the checkpoint (insert then delete leaves nothing)', async () => {
    for (const formatVersion of [2, 3] as const) {
      const table = await newTable(w, { formatVersion });
      const writer = new TableChangeWriter(table);
      await writer.applyAll([insert(row(10n, 1, 'x')), update(row(10n, 1, 'y')), remove(row(10n, 1, 'y'))]);
      const p = await writer.prepare();
      expect(p.dataFiles).toEqual([]);
      expect(byContent(p.deleteFiles, 'position-deletes')).toEqual([]);
      // Only the equality delete of key 10 (for an older copy in the table) remains.
      expect(byContent(p.deleteFiles, 'equality-deletes').map((f) => f.recordCount)).toEqual([1n]);
      expect(p.stats.droppedDataFiles).toBe(1);
      const dataDir = localPath(`${table.metadata.location}/data`);
      const parquetFiles = fs.readdirSync(dataDir).filter((f) => f.startsWith('00000-'));
      expect(parquetFiles).toEqual([]);
    }
  });

  it('rolls data files at the target size and deletes positions in the right file', async () => {
    const table = await newTable(w, { formatVersion: 3 });
    const writer = new TableChangeWriter(table, { targetFileSizeBytes: 4096, sizeCheckRows: 100 });
    const n = 3000;
    for (let i = 0; i < n; i++) await writer.apply(insert(row(BigInt(i), 1, `name-${i}-${'x'.repeat(i % 13)}`)));
    const updated = new Set<number>();
    for (let i = 0; i < n; i += 7) {
      updated.add(i);
      await writer.apply(update(row(BigInt(i), 1, `new-${i}`)));
    }
    const p = await writer.prepare();
    expect(p.dataFiles.length).toBeGreaterThan(2);
    const dvs = new Map(byContent(p.deleteFiles, 'position-deletes', 'PUFFIN').map((f) => [f.referencedDataFile!, f]));
    let live = 0;
    for (const data of p.dataFiles) {
      const rows = await parquetRows(data.filePath);
      expect(BigInt(rows.length)).toBe(data.recordCount);
      const dv = dvs.get(data.filePath);
      const deleted = new Set<number>();
      if (dv) {
        const bytes = readLocal(dv.filePath);
        const blob = decodePuffin(bytes).blobs.find((b) => b.properties['referenced-data-file'] === data.filePath)!;
        for (const pos of decodeDeletionVectorBlob(bytes.subarray(blob.offset, blob.offset + blob.length))) deleted.add(Number(pos));
      }
      rows.forEach((r, pos) => {
        const id = Number(r.id as bigint);
        const superseded = updated.has(id) && (r.name as string).startsWith('name-');
        expect(deleted.has(pos), `row ${id} at ${pos} in ${data.filePath}`).toBe(superseded);
        if (!superseded) live++;
      });
    }
    expect(live).toBe(n);
  });

  it('append-only mode writes no equality deletes for inserts but still de-duplicates a key within the checkpoint', async () => {
    const table = await newTable(w, { formatVersion: 2 });
    const writer = new TableChangeWriter(table, { mode: 'append-only' });
    await writer.applyAll([insert(row(1n, 1, 'a')), insert(row(2n, 1, 'b')), insert(row(1n, 1, 'a again'))]);
    let p = await writer.prepare();
    expect(byContent(p.deleteFiles, 'equality-deletes')).toEqual([]);
    const [pos] = byContent(p.deleteFiles, 'position-deletes');
    expect(await parquetRows(pos.filePath)).toEqual([{ file_path: p.dataFiles[0].filePath, pos: 0n }]);

    // A delete of a key this checkpoint did not write still reaches older rows.
    const second = new TableChangeWriter(table, { mode: 'append-only' });
    await second.apply(removeKey([7n]));
    p = await second.prepare();
    expect(byContent(p.deleteFiles, 'equality-deletes').map((f) => f.recordCount)).toEqual([1n]);
  });

  it('append-only mode with a key index (v3): inserts ask the index nothing, an in-checkpoint duplicate is a DV, a delete still asks it', async () => {
    const table = await newTable(w, { formatVersion: 3 });
    const asked: KeyId[] = [];
    const index = new (class extends MemoryKeyIndex {
      override get(k: KeyId) {
        asked.push(k);
        return super.get(k);
      }
      override find(k: KeyId) {
        asked.push(k);
        return super.find(k);
      }
    })(undefined);
    const writer = new TableChangeWriter(table, { mode: 'append-only', keyIndex: index });
    await writer.applyAll([insert(row(1n, 1, 'a')), insert(row(2n, 1, 'b')), insert(row(1n, 1, 'a again'))]);
    expect(asked, 'a snapshot row cannot be committed: no lookup').toEqual([]);
    const p = await writer.prepare();
    expect(byContent(p.deleteFiles, 'equality-deletes')).toEqual([]);
    const [dv, ...more] = byContent(p.deleteFiles, 'position-deletes', 'PUFFIN');
    expect(more).toEqual([]);
    expect(dv.referencedDataFile).toBe(p.dataFiles[0].filePath);
    const bytes = readLocal(dv.filePath);
    const [blob] = decodePuffin(bytes).blobs;
    expect(decodeDeletionVectorBlob(bytes.subarray(blob.offset, blob.offset + blob.length))).toEqual([0n]);

    const second = new TableChangeWriter(table, { mode: 'append-only', keyIndex: index });
    await second.apply(removeKey([7n]));
    // the lookups of committed rows are made at the checkpoint, in key order (keyed-change-writer.ts)
    expect(asked).toEqual([]);
    expect(second.committedTargetPaths()).toEqual([]);
    expect(asked).toHaveLength(1);
    await second.abort();
  });

  it('append mode (no key): deletes one in-checkpoint copy by position, older rows by a whole-row equality delete without float columns', async () => {
    const schema = new Schema(0, [
      { id: 1, name: 'a', required: false, type: Types.int },
      { id: 2, name: 'b', required: false, type: Types.string },
      { id: 3, name: 'f', required: false, type: Types.double },
    ]);
    const table = await newTable(w, { formatVersion: 2, schema });
    const writer = new TableChangeWriter(table);
    expect(writer.mode).toBe('append');
    await writer.applyAll([
      insert([1, 'x', 0.5]),
      insert([1, 'x', 0.5]),
      remove([1, 'x', 0.5]),
      remove([2, null, 1.5]),
      update([4, 'z', null], [3, 'y', 2.5]),
    ]);
    const p = await writer.prepare();
    expect(p.dataFiles[0].recordCount).toBe(3n);
    const [pos] = byContent(p.deleteFiles, 'position-deletes');
    expect(await parquetRows(pos.filePath)).toEqual([{ file_path: p.dataFiles[0].filePath, pos: 1n }]);
    const [eq] = byContent(p.deleteFiles, 'equality-deletes');
    expect(eq.equalityIds).toEqual([1, 2]);
    expect(await parquetRows(eq.filePath)).toEqual([
      { a: 2, b: null },
      { a: 3, b: 'y' },
    ]);
  });

  it('partitioned tables: global equality deletes under an unpartitioned spec, position deletes in the data file partition', async () => {
    const table = await newTable(w, { formatVersion: 2, spec: BY_GROUP });
    const changes = [insert(row(1n, 1, 'a')), insert(row(5n, 1, 'stays')), insert(row(2n, 2, 'b')), update(row(1n, 2, 'moved'), row(1n, 1, 'a')), remove(row(2n, 2, 'b'))];
    const first = new TableChangeWriter(table);
    await first.applyAll(changes);
    expect(first.needsUnpartitionedSpec).toBe(true);
    await expect(first.prepare()).rejects.toThrow(/no unpartitioned spec/);

    const { table: withSpec, spec } = await ensureUnpartitionedSpec(table);
    expect(spec.specId).not.toBe(0);
    const writer = new TableChangeWriter(withSpec);
    await writer.applyAll(changes);
    const p = await writer.prepare({ equalityDeleteSpecId: spec.specId });
    const [eq] = byContent(p.deleteFiles, 'equality-deletes');
    expect(eq.specId).toBe(spec.specId);
    expect(eq.partition).toEqual([]);
    expect(p.dataFiles.map((f) => [f.specId, f.partition, f.recordCount]).sort()).toEqual([
      [0, [1], 2n],
      [0, [2], 2n],
    ]);
    const posFiles = byContent(p.deleteFiles, 'position-deletes');
    expect(posFiles.map((f) => [f.specId, f.partition, f.recordCount]).sort()).toEqual([
      [0, [1], 1n],
      [0, [2], 1n],
    ]);
    for (const f of posFiles) expect(f.filePath).toContain(`/data/grp=${f.partition[0]}/`);
  });

  it("writes data files in the table's write.parquet.compression-codec, delete files in write.delete.parquet.compression-codec (else the data files'), and refuses a codec an engine cannot read", async () => {
    const codecsOf = async (properties: Record<string, string> | undefined) => {
      const writer = new TableChangeWriter(await newTable(w, { formatVersion: 2, properties }));
      await writer.applyAll(SCENARIO);
      const p = await writer.prepare();
      expect((await parquetRows(p.dataFiles[0]!.filePath)).map((r) => r.name)).toEqual(['a', 'b', 'a2']);
      for (const f of p.deleteFiles) expect((await parquetRows(f.filePath)).length).toBe(Number(f.recordCount));
      return { data: p.dataFiles.flatMap((f) => parquetCodecsOf(f.filePath)), deletes: [...new Set(p.deleteFiles.flatMap((f) => parquetCodecsOf(f.filePath)))] };
    };
    expect(await codecsOf(undefined)).toEqual({ data: ['ZSTD'], deletes: ['ZSTD'] });
    expect(await codecsOf({ 'write.parquet.compression-codec': 'SNAPPY', 'write.delete.parquet.compression-codec': 'gzip' })).toEqual({ data: ['SNAPPY'], deletes: ['GZIP'] });
    expect(await codecsOf({ 'write.parquet.compression-codec': 'Uncompressed' })).toEqual({ data: ['UNCOMPRESSED'], deletes: ['UNCOMPRESSED'] });
    // codecs some engine refuses, or arrow-rs does not write
    for (const [property, codec] of [['write.parquet.compression-codec', 'lz4_raw'], ['write.delete.parquet.compression-codec', 'brotli'], ['write.parquet.compression-codec', 'lzo']]) {
      const table = await newTable(w, { formatVersion: 2, properties: { [property!]: codec! } });
      expect(() => new TableChangeWriter(table)).toThrow(`property ${property} is "${codec}"; floe writes Parquet with zstd, snappy, gzip or uncompressed`);
    }
  });

  it('rejects rows of the wrong width and null keys, naming what was expected', async () => {
    const table = await newTable(w, { formatVersion: 2 });
    const writer = new TableChangeWriter(table);
    await expect(writer.apply(insert([1n, 1]))).rejects.toThrow(/expected an array of 5 values/);
    await expect(writer.apply(insert([null, 1, null, null, null]))).rejects.toThrow(/identifier field id is null/);
    await expect(writer.apply({ op: 'delete' })).rejects.toThrow(/needs `key` or `before`/);
    await writer.abort();
  });
});

describe('partitioned checkpoints: files per partition and buffer bounds', () => {
  /** A ~120-byte row of group `grp`. */
  const wide = (id: number, grp: number): Row => row(BigInt(id), grp, `name-${id}-${'x'.repeat(100)}`, `${id % 1000}.50`);

  /** The encoder factory of the default encoder, counting batches handed over before `finish`. */
  function countingEncoder(): { factory: ParquetEncoderFactory; earlyBatches: () => number } {
    let early = 0;
    const factory: ParquetEncoderFactory = (options) => {
      const inner = wasmParquetEncoder(options);
      return {
        get bytesEmitted() {
          return inner.bytesEmitted;
        },
        get chunksEmitted() {
          return inner.chunksEmitted;
        },
        write: (ipc) => {
          early++;
          return inner.write(ipc);
        },
        finish: (last) => inner.finish(last),
        abort: () => inner.abort(),
      };
    };
    return { factory, earlyBatches: () => early };
  }

  async function commitAndRead(table: CatalogTable, p: PreparedChanges): Promise<Row[]> {
    const result = await commitRowDelta(table, { dataFiles: p.dataFiles, deleteFiles: p.deleteFiles, removedFiles: p.removedDeleteFiles });
    return (await readTableRows(result.table)).sort((x, y) => Number((x[0] as bigint) - (y[0] as bigint)));
  }

  it('rows of one checkpoint share one file per partition; large partitions hand batches to the encoder before the checkpoint', async () => {
    const table = await newTable(w, { formatVersion: 2, spec: BY_GROUP });
    const { factory, earlyBatches } = countingEncoder();
    const writer = new TableChangeWriter(table, { mode: 'append-only', encodeAfterBytes: 256 * 1024, parquet: { encoderFactory: factory } });
    const expected: Row[] = [];
    for (let chunk = 0; chunk < 10; chunk++) {
      const rows = Array.from({ length: 1000 }, (_, i) => wide(chunk * 1000 + i, i % 2));
      expected.push(...rows);
      await writer.applyAll(rows.map((r) => insert(r)));
    }
    // without the bound no file would reach its 16,384-row batch before prepare
    expect(earlyBatches()).toBeGreaterThan(0);
    const p = await writer.prepare();
    expect(p.dataFiles.map((f) => [f.partition, f.recordCount])).toEqual([
      [[0], 5000n],
      [[1], 5000n],
    ]);
    expect(await commitAndRead(table, p)).toEqual(expected);
  });

  it('past maxBufferedBytes the largest files are finished early: more files, every row once, positions still right', async () => {
    const table = await newTable(w, { formatVersion: 2, spec: BY_GROUP });
    const writer = new TableChangeWriter(table, { mode: 'append-only', encodeAfterBytes: 32 * 1024, maxBufferedBytes: 128 * 1024 });
    const rows = Array.from({ length: 6000 }, (_, i) => wide(i, i % 100)); // 100 partitions of 60 rows: none worth a batch of its own
    await writer.applyAll(rows.map((r) => insert(r)));
    // the same keys again, now in other partitions: the earlier copies (in finished files too) are removed by position
    const again = rows.slice(0, 100).map((r) => wide(Number(r[0]), 7));
    await writer.applyAll(again.map((r) => insert(r)));
    const p = await writer.prepare();
    const partitions = new Set(p.dataFiles.map((f) => String(f.partition[0])));
    expect(partitions.size).toBe(100);
    expect(p.dataFiles.length).toBeGreaterThan(100);
    expect(p.stats.positionDeletes).toBe(100);
    const expected = [...again, ...rows.slice(100)].sort((x, y) => Number((x[0] as bigint) - (y[0] as bigint)));
    expect(await commitAndRead(table, p)).toEqual(expected);
  });
});

describe('deletion vector merge', () => {
  it('unions a new DV with the data file’s existing one and returns the old entry for removal', async () => {
    const table = await newTable(w, { formatVersion: 3 });
    const dataPath = `${table.metadata.location}/data/some-file.parquet`;
    const old = await writeDeletionVectors({
      io: table.io,
      puffinPath: `${table.metadata.location}/data/old.puffin`,
      targets: [{ dataFilePath: dataPath, specId: 0, partition: [], positions: PositionBitmap.of([1, 5, 70000]) }],
    });
    const merged = await writeDeletionVectors({
      io: table.io,
      puffinPath: `${table.metadata.location}/data/new.puffin`,
      targets: [{ dataFilePath: dataPath, specId: 0, partition: [], positions: PositionBitmap.of([2, 5, 2n ** 33n]) }],
      existing: new Map([[dataPath, { positions: PositionBitmap.of([1, 5, 70000]), replaces: old.deleteFiles }]]),
    });
    expect(merged.removed).toEqual(old.deleteFiles);
    const [dv] = merged.deleteFiles;
    expect(dv.recordCount).toBe(5n);
    const bytes = readLocal(dv.filePath);
    const blob = decodePuffin(bytes).blobs[0];
    expect(decodeDeletionVectorBlob(bytes.subarray(blob.offset, blob.offset + blob.length))).toEqual([1n, 2n, 5n, 70000n, 2n ** 33n]);
  });
});
