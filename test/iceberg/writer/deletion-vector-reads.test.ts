/**
 * readExistingDeletionVectors: the DVs a commit replaces, read from the Puffin files checkpoints
 * wrote — several from one file, from several files at once, one range a file where its wanted blobs
 * lie close together and one range a blob where they do not — each checked against its record_count.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalFileIO } from '../../../src/io/local-file-io.js';
import { PositionBitmap } from '../../../src/iceberg/puffin/position-bitmap.js';
import type { DataFile } from '../../../src/iceberg/spec/data-file.js';
import { readExistingDeletionVectors, writeDeletionVectors } from '../../../src/iceberg/writer/position-delete-writers.js';

describe('readExistingDeletionVectors', () => {
  let dir: string;
  const reads: { path: string; start: number; end: number }[] = [];
  const io = new (class extends LocalFileIO {
    override readRange(p: string, start: number, end: number): Promise<Uint8Array> {
      reads.push({ path: p, start, end });
      return super.readRange(p, start, end);
    }
  })();
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'floe-dv-reads-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const puffin = async (name: string, positionsByFile: Record<string, number[]>): Promise<DataFile[]> => {
    const targets = Object.entries(positionsByFile).map(([dataFilePath, positions]) => ({ dataFilePath, specId: 0, partition: [], positions: PositionBitmap.of(positions) }));
    const written = await writeDeletionVectors({ io, puffinPath: `file://${dir}/${name}.puffin`, targets });
    return written.deleteFiles;
  };

  it('reads each DV of several Puffin files, in the order asked, one range for blobs close together', async () => {
    const a = await puffin('a', { 'f1.parquet': [1, 5, 9], 'f2.parquet': [0], 'f3.parquet': [7, 8] });
    const b = await puffin('b', { 'f4.parquet': [2, 3], 'f5.parquet': [100_000, 4_000_000] });
    reads.length = 0;
    const asked = [b[1]!, a[0]!, a[2]!, b[0]!];
    const got = await readExistingDeletionVectors(io, asked);
    expect(got.map((p) => p.toArray())).toEqual([[100_000n, 4_000_000n], [1n, 5n, 9n], [7n, 8n], [2n, 3n]]);
    expect(reads.map((r) => path.basename(r.path)).sort()).toEqual(['a.puffin', 'b.puffin']);
    expect(await readExistingDeletionVectors(io, [])).toEqual([]);
  });

  it('reads blobs far apart one by one, not the file between them', async () => {
    // a DV of over 1 MiB between two small ones: random positions, two bytes each in array containers
    const big: number[] = [];
    for (let i = 0; i < 700_000; i++) big.push(i * 6151 + (i % 7));
    const files = await puffin('c', { 'small1.parquet': [3], 'big.parquet': big, 'small2.parquet': [4, 6] });
    const small = files.filter((f) => f.referencedDataFile !== 'big.parquet');
    expect(small).toHaveLength(2);
    reads.length = 0;
    const got = await readExistingDeletionVectors(io, small);
    expect(got.map((p) => p.toArray())).toEqual(small.map((f) => (f.referencedDataFile === 'small1.parquet' ? [3n] : [4n, 6n])));
    expect(reads).toHaveLength(2);
    for (const r of reads) expect(r.end - r.start).toBeLessThan(1000);
  });

  it('refuses a DV whose record_count is not what it holds', async () => {
    const [dv] = await puffin('d', { 'f.parquet': [1, 2, 3] });
    await expect(readExistingDeletionVectors(io, [{ ...dv!, recordCount: 4n }])).rejects.toThrow(/holds 3 positions, its manifest entry's record_count is 4/);
  });
});
