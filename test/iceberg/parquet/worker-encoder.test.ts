import { afterAll, describe, expect, it } from 'vitest';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import type { Row } from '../../../src/model/values.js';
import { ParquetFileWriter, writeParquetFile } from '../../../src/iceberg/parquet/file-writer.js';
import { readParquetRows } from '../../../src/iceberg/parquet/reader.js';
import { WorkerEncoderPool } from '../../../src/iceberg/parquet/worker-encoder.js';
import { readWithHyparquet } from './hyparquet-raw.js';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LocalFileIO } from '../../../src/io/local-file-io.js';
import { RollingParquetWriter } from '../../../src/iceberg/parquet/rolling-writer.js';

const SCHEMA = new Schema(
  0,
  [
    { id: 1, name: 'id', required: true, type: Types.long },
    { id: 2, name: 'qty', required: false, type: Types.int },
    { id: 3, name: 'price', required: false, type: Types.decimal(12, 2) },
    { id: 4, name: 'name', required: false, type: Types.string },
    { id: 5, name: 'at', required: false, type: Types.timestamptz },
  ],
  [1],
);

function rows(n: number, seed = 0): Row[] {
  const out: Row[] = [];
  for (let i = 0; i < n; i++) {
    const k = i + seed;
    out.push([BigInt(k), k % 7 === 0 ? null : k % 1000, `${k % 5000}.${String(k % 100).padStart(2, '0')}`, k % 11 === 0 ? null : `name-${k % 313}-ü`, BigInt(k) * 1_000_003n]);
  }
  return out;
}

const pool = new WorkerEncoderPool({ threads: 2, maxInFlight: 2 });
afterAll(() => pool.close());

describe('worker-thread Parquet encoder', () => {
  it('threads started ahead of their first file (prewarm) do not keep the process alive', async () => {
    const { spawnSync } = await import('node:child_process');
    const { fileURLToPath } = await import('node:url');
    const module = new URL('../../../src/iceberg/parquet/worker-encoder.ts', import.meta.url).href;
    const script = `import(${JSON.stringify(module)}).then(({ WorkerEncoderPool }) => { const p = new WorkerEncoderPool({ threads: 2 }); p.prewarm(); console.log('prewarmed', p.threadCount); })`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('../../../', import.meta.url)), timeout: 30_000, encoding: 'utf8' });
    expect({ status: child.status, signal: child.signal, out: child.stdout.trim() }, child.stderr).toEqual({ status: 0, signal: null, out: 'prewarmed 2' });
  });

  it('writes the same bytes as the single-thread encoder, across many batches and row groups', async () => {
    const data = rows(6000);
    const options = { batchRows: 700, rowGroupRows: 1000 };
    const local = await writeParquetFile(SCHEMA, data, options);
    const viaWorker = await writeParquetFile(SCHEMA, data, { ...options, encoderFactory: pool.factory });
    expect(viaWorker.recordCount).toBe(6000n);
    expect(viaWorker.splitOffsets.length).toBe(6);
    expect(Buffer.from(viaWorker.bytes).equals(Buffer.from(local.bytes))).toBe(true);
    expect(viaWorker.metrics).toEqual(local.metrics);
    const back = await readParquetRows(viaWorker.bytes, { projection: SCHEMA });
    expect(back).toEqual(data);
    const independent = await readWithHyparquet(viaWorker.bytes, SCHEMA.fields, SCHEMA.fields.map((f) => f.name));
    expect(independent).toEqual(data);
  });

  it('encodes several files at once on the pool, each intact', async () => {
    const files = await Promise.all(
      [0, 1, 2, 3, 4].map(async (f) => {
        const w = new ParquetFileWriter(SCHEMA, { batchRows: 500, encoderFactory: pool.factory });
        const data = rows(3000 + f * 100, f * 100_000);
        for (let i = 0; i < data.length; i += 250) await w.write(data.slice(i, i + 250));
        return { data, result: await w.close() };
      }),
    );
    for (const { data, result } of files) expect(await readParquetRows(result.bytes, { projection: SCHEMA })).toEqual(data);
    expect(pool.threadCount).toBe(2);
  });

  it('an empty file and an aborted file', async () => {
    const empty = await writeParquetFile(SCHEMA, [], { encoderFactory: pool.factory });
    expect(empty.recordCount).toBe(0n);
    expect(await readParquetRows(empty.bytes, { projection: SCHEMA })).toEqual([]);
    const w = new ParquetFileWriter(SCHEMA, { batchRows: 100, encoderFactory: pool.factory });
    await w.write(rows(1000));
    await w.abort();
    // the pool keeps working after an abort
    const after = await writeParquetFile(SCHEMA, rows(10), { encoderFactory: pool.factory });
    expect(after.recordCount).toBe(10n);
  });

  it('reports bytes arrow-rs cannot read as a failure of that file only', async () => {
    const encoder = pool.open({ compression: 'zstd', keyValueMetadata: new Map(), maxRowGroupBytes: 1 << 20 });
    await encoder.write(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]));
    await expect(encoder.finish()).rejects.toThrow(/iceberg\.parquet: parquet-wasm failed while encoding in a worker thread/);
    const ok = await writeParquetFile(SCHEMA, rows(5), { encoderFactory: pool.factory });
    expect(ok.recordCount).toBe(5n);
  });

  describe('files bound for the local file system', () => {
    /** A LocalFileIO that lists the writes made through it, and can point the workers' writes elsewhere. */
    class CountingIO extends LocalFileIO {
      writes: string[] = [];
      workerPath: ((location: string) => string) | undefined;
      override async write(location: string, data: Uint8Array): Promise<void> {
        this.writes.push(location);
        return super.write(location, data);
      }
      override async writeUnpublished(location: string, data: Uint8Array): Promise<void> {
        this.writes.push(location);
        return super.writeUnpublished(location, data);
      }
      override localFilePath(location: string): string {
        return this.workerPath ? this.workerPath(location) : super.localFilePath(location);
      }
    }

    async function writeFiles(io: CountingIO, root: string, data: Row[]): Promise<string[]> {
      const w = new RollingParquetWriter(SCHEMA, {
        io,
        locations: { newDataLocation: (name, part) => `file://${root}/data/${part}/${name}` },
        specId: 0,
        partition: ['a'],
        partitionPath: 'p=a',
        targetFileSizeBytes: 64 * 1024,
        encoderFactory: pool.factory,
      });
      await w.write(data);
      return (await w.close()).map((f) => f.filePath);
    }

    it('the worker stores each file durably where the FileIO would, without a write on the main thread', async () => {
      const root = await mkdtemp(path.join(tmpdir(), 'floe-worker-write-'));
      try {
        const io = new CountingIO();
        const data = rows(20_000);
        const paths = await writeFiles(io, root, data);
        expect(paths.length).toBeGreaterThan(1);
        expect(io.writes).toEqual([]);
        expect((await readdir(path.join(root, 'data', 'p=a'))).sort()).toEqual(paths.map((p) => path.basename(p)).sort()); // no temporary file left
        const back: Row[] = [];
        for (const p of paths) back.push(...(await readWithHyparquet(new Uint8Array(await readFile(new URL(p))), SCHEMA.fields, SCHEMA.fields.map((f) => f.name))));
        expect(back).toEqual(data);
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    });

    it('a file the worker cannot store is written through the FileIO instead', async () => {
      const root = await mkdtemp(path.join(tmpdir(), 'floe-worker-write-'));
      try {
        const blocker = path.join(root, 'not-a-directory');
        await writeFile(blocker, 'x');
        const io = new CountingIO();
        io.workerPath = (location) => path.join(blocker, path.basename(location)); // ENOTDIR in the worker
        const data = rows(300);
        const paths = await writeFiles(io, root, data);
        expect(io.writes).toEqual(paths);
        expect(await readFile(blocker, 'utf8')).toBe('x');
        const back = await readWithHyparquet(new Uint8Array(await readFile(new URL(paths[0]!))), SCHEMA.fields, SCHEMA.fields.map((f) => f.name));
        expect(back).toEqual(data);
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    });
  });
});
