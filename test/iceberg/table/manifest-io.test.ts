/**
 * readManifestEntries decodes a committed manifest once: later reads of the same file with the same
 * manifest-list values come from memory (the file may be gone by then), frozen, each caller with its
 * own array; another inheritance is decoded on its own, and a manifest not yet in a written list is
 * never kept.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fileIOFor } from '../../../src/io/file-io-factory.js';
import { readManifestEntries, writeManifestFile } from '../../../src/iceberg/table/manifest-io.js';
import { dataFile, schema, unpartitioned } from '../avro/manifest-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'floe-manifest-io-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const io = fileIOFor(pathToFileURL(dir).href);

async function written(name: string, snapshotId: bigint) {
  const path = `${pathToFileURL(dir).href}/${name}`;
  const entries = [
    { status: 'added' as const, dataFile: dataFile(`${dir}/a.parquet`, 10n, [], { specId: 0 }) },
    { status: 'added' as const, dataFile: dataFile(`${dir}/b.parquet`, 5n, [], { specId: 0 }) },
  ];
  return writeManifestFile(io, { formatVersion: 3, schema, spec: unpartitioned, content: 'data', snapshotId, path, entries });
}

describe('readManifestEntries', () => {
  it('reads a committed manifest once, and hands out frozen entries in arrays of the caller', async () => {
    const m = { ...(await written('m1.avro', 71n)), sequenceNumber: 4n, minSequenceNumber: 4n, firstRowId: 100n };
    const first = await readManifestEntries(io, m);
    expect(first.map((e) => [e.sequenceNumber, e.dataFile.firstRowId])).toEqual([
      [4n, 100n],
      [4n, 110n],
    ]);
    await io.delete(m.path);
    const again = await readManifestEntries(io, m);
    expect(again).toEqual(first);
    expect(again).not.toBe(first);
    again.pop();
    expect(await readManifestEntries(io, m)).toHaveLength(2);
    expect(() => {
      (first[0] as { status: string }).status = 'deleted';
    }).toThrow(TypeError);
    expect(() => {
      (first[0]!.dataFile as { recordCount: bigint }).recordCount = 1n;
    }).toThrow(TypeError);
    // the same file in another list position (another sequence number and first row id) is read anew
    await expect(readManifestEntries(io, { ...m, sequenceNumber: 5n })).rejects.toThrow(/manifest .*m1\.avro is missing/);
  });

  it('never keeps a manifest that no written list holds yet (its inherited values are not known)', async () => {
    const m = await written('m2.avro', 72n);
    expect(m.sequenceNumber).toBeUndefined();
    expect(await readManifestEntries(io, m)).toHaveLength(2);
    await io.delete(m.path);
    await expect(readManifestEntries(io, m)).rejects.toThrow(/manifest .*m2\.avro is missing/);
  });
});
