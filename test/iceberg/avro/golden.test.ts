/**
 * Manifests and manifest lists written by Java/Spark (Iceberg 1.8.1) and by a Python writer, from
 * ../shared/fixtures/iceberg-golden (see its README). floe's decoder must read them exactly as the
 * independent `avsc` decoder does, and what it reads must agree with the table metadata written
 * alongside: snapshot ids and sequence numbers, and the snapshot summaries' totals computed by Java.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAvroFile } from '../../../src/iceberg/avro/container.js';
import { readManifestList } from '../../../src/iceberg/manifest/manifest-list.js';
import { readManifest } from '../../../src/iceberg/manifest/manifest.js';
import type { ManifestEntry } from '../../../src/iceberg/spec/data-file.js';
import { parseJson } from '../../../src/util/json.js';
import { decodeWithAvsc, plain } from './avsc-decode.js';
import { GOLDEN_DIR, goldenAvailable } from '../../support/golden.js';

const ROOT = GOLDEN_DIR + '/';
const TABLES = [
  'data/persistent/equality_deletes/warehouse/mydb/mytable',
  'data/persistent/equality_deletes/warehouse/mydb/mytable_partitioned',
  'data/persistent/add_columns_with_defaults/default.db/add_columns_with_defaults',
];
const available = goldenAvailable;

function avroFiles(): string[] {
  return TABLES.flatMap((t) => readdirSync(join(ROOT, t, 'metadata')).filter((f) => f.endsWith('.avro')).map((f) => join(t, 'metadata', f)));
}

/** floe's decoded value in avsc's shape: Maps → objects (none in manifests), everything else as is. */
function normalize(v: unknown): unknown {
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, normalize(x)]));
  if (Array.isArray(v)) return v.map(normalize);
  if (v instanceof Uint8Array || v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalize(x)]));
}

interface SnapshotJson {
  'snapshot-id': bigint | number;
  'parent-snapshot-id'?: bigint | number;
  'sequence-number': number;
  'manifest-list': string;
  summary: Record<string, string>;
}

describe.skipIf(!available)('golden Java-written Avro files', () => {
  it('decodes every manifest and manifest list exactly as avsc does', async () => {
    const files = avroFiles();
    expect(files.length).toBe(27);
    for (const f of files) {
      const bytes = readFileSync(join(ROOT, f));
      const ours = readAvroFile(bytes);
      const theirs = await decodeWithAvsc(bytes);
      expect(ours.codec, f).toBe(theirs.codec);
      expect(normalize(ours.records), f).toEqual(theirs.records.map(plain));
      for (const [k, v] of ours.metadata) expect(v, `${f} ${k}`).toBe(theirs.meta[k]);
      expect(JSON.parse(ours.schemaJson)).toEqual(theirs.schema);
    }
  });

  it('reads manifest lists and manifests that agree with the table metadata and Java snapshot summaries', () => {
    let checked = 0;
    for (const table of TABLES) {
      const metaDir = join(ROOT, table, 'metadata');
      const snapshots = new Map<string, SnapshotJson>();
      for (const m of readdirSync(metaDir).filter((x) => x.endsWith('.metadata.json'))) {
        const meta = parseJson(readFileSync(join(metaDir, m), 'utf8'), { bigints: 'all' }) as { snapshots?: SnapshotJson[] };
        for (const s of meta.snapshots ?? []) snapshots.set(s['manifest-list'], s);
      }
      const knownIds = new Set([...snapshots.values()].map((s) => BigInt(s['snapshot-id'])));
      for (const [listPath, snap] of snapshots) {
        const full = join(ROOT, listPath);
        if (!existsSync(full)) continue; // the fixture keeps only some attempts' manifest lists
        const snapshotId = BigInt(snap['snapshot-id']);
        const seq = BigInt(snap['sequence-number']);
        const list = readManifestList(readFileSync(full), listPath);
        expect(list.metadata.snapshotId).toBe(snapshotId);
        expect(list.metadata.sequenceNumber).toBe(seq);
        expect(list.metadata.parentSnapshotId).toBe(snap['parent-snapshot-id'] === undefined ? undefined : BigInt(snap['parent-snapshot-id']));
        expect(list.metadata.formatVersion).toBe(2);

        const live: ManifestEntry[] = [];
        for (const mf of list.manifests) {
          expect(mf.sequenceNumber! <= seq).toBe(true);
          expect(knownIds.has(mf.addedSnapshotId), `${mf.path} added by a known snapshot`).toBe(true);
          const bytes = readFileSync(join(ROOT, mf.path));
          expect(BigInt(statSync(join(ROOT, mf.path)).size)).toBe(mf.length); // manifest_length is exact
          const { entries, metadata } = readManifest(bytes, mf);
          expect(metadata.content).toBe(mf.content);
          expect(metadata.specId).toBe(mf.specId);
          expect(entries.filter((e) => e.status === 'added').length).toBe(mf.addedFilesCount);
          expect(entries.filter((e) => e.status === 'added').reduce((a, e) => a + e.dataFile.recordCount, 0n)).toBe(mf.addedRowsCount);
          for (const e of entries) {
            // Sequence Number Inheritance: ADDED entries carry null and take the manifest's.
            if (e.status === 'added') expect([e.sequenceNumber, e.fileSequenceNumber]).toEqual([mf.sequenceNumber, mf.sequenceNumber]);
            expect(e.snapshotId).toBeDefined();
            expect(e.dataFile.specId).toBe(mf.specId);
            expect(e.dataFile.content === 'data').toBe(mf.content === 'data');
            if (e.status !== 'deleted') live.push(e);
          }
        }
        const sum = (pred: (e: ManifestEntry) => boolean, v: (e: ManifestEntry) => bigint = (e) => e.dataFile.recordCount): string =>
          String(live.filter(pred).reduce((a, e) => a + v(e), 0n));
        const s = snap.summary;
        expect(sum((e) => e.dataFile.content === 'data')).toBe(s['total-records']);
        expect(String(live.filter((e) => e.dataFile.content === 'data').length)).toBe(s['total-data-files']);
        expect(String(live.filter((e) => e.dataFile.content !== 'data').length)).toBe(s['total-delete-files']);
        expect(sum((e) => e.dataFile.content === 'equality-deletes')).toBe(s['total-equality-deletes']);
        expect(sum((e) => e.dataFile.content === 'position-deletes')).toBe(s['total-position-deletes']);
        expect(sum(() => true, (e) => e.dataFile.fileSizeInBytes)).toBe(s['total-files-size']);
        checked++;
      }
    }
    expect(checked).toBe(12); // 5 + 5 + 2 manifest lists referenced by metadata and present
  });

  it('reads partition values, equality ids and metrics of the Spark-written partitioned table', () => {
    const t = TABLES[1];
    const list = readManifestList(readFileSync(join(ROOT, t, 'metadata/snap-883882341917253211-1-ec04e9ce-e03b-4fbe-a707-3645c1938319.avro')));
    const entries = list.manifests.flatMap((mf) => readManifest(readFileSync(join(ROOT, mf.path)), mf).entries);
    for (const e of entries) {
      // Spark writes identity partitions as path segments: .../data/name=<value>/...
      const segment = /\/name=([^/]+)\//.exec(e.dataFile.filePath)![1];
      expect(e.dataFile.partition).toEqual([segment]);
    }
    const eq = entries.filter((e) => e.dataFile.content === 'equality-deletes');
    // seq 2 deletes name='b' (id 2 = name) in partition b; seq 3 deletes (name, id) = ('c', 3) in partition c
    expect(eq.map((e) => [e.dataFile.partition[0], e.dataFile.equalityIds, e.sequenceNumber]).sort()).toEqual([['b', [2], 2n], ['c', [2, 1], 3n]]);
    const data = entries.filter((e) => e.dataFile.content === 'data');
    expect(data.map((e) => [e.dataFile.partition[0], e.sequenceNumber]).sort()).toEqual([['a', 1n], ['b', 1n], ['c', 1n], ['d', 1n], ['e', 4n], ['f', 4n]]);
    const a = data.find((e) => e.dataFile.partition[0] === 'a')!.dataFile;
    expect(a.recordCount).toBe(1n);
    expect(a.fileFormat).toBe('PARQUET');
    expect(new TextDecoder().decode(a.lowerBounds!.get(2))).toBe('a');
    expect(a.valueCounts!.get(1)).toBe(1n);
    // The summary of the manifest list bounds the partition values.
    const m = list.manifests.find((x) => x.content === 'data' && x.sequenceNumber === 1n)!;
    expect(m.partitions!.map((p) => [p.containsNull, p.containsNan, new TextDecoder().decode(p.lowerBound), new TextDecoder().decode(p.upperBound)])).toEqual([[false, false, 'a', 'd']]);
  });

  it('reads equality ids of the unpartitioned table and the Python-written (codec null) files', () => {
    const list = readManifestList(readFileSync(join(ROOT, TABLES[0], 'metadata/snap-1916084761853986166-1-61648895-78fc-44d6-bf55-298a7614c4f8.avro')));
    const deletes = list.manifests
      .filter((m) => m.content === 'deletes')
      .flatMap((mf) => readManifest(readFileSync(join(ROOT, mf.path)), mf).entries)
      .map((e) => [e.sequenceNumber, e.dataFile.equalityIds]);
    expect(deletes).toEqual([[6n, [2]], [4n, [1, 2]], [3n, [1]], [2n, [2]]]);

    const py = join(ROOT, TABLES[2], 'metadata/snap-1915606074736806848-0-f1823874-113e-405c-b412-f75145620823.avro');
    const pyList = readManifestList(readFileSync(py));
    expect(pyList.manifests.map((m) => [m.sequenceNumber, m.addedRowsCount])).toEqual([[2n, 1n], [1n, 2n]]);
    const entries = pyList.manifests.flatMap((mf) => readManifest(readFileSync(join(ROOT, mf.path)), mf).entries);
    expect(entries.map((e) => [e.status, e.sequenceNumber, e.dataFile.partition, e.dataFile.recordCount])).toEqual([
      ['added', 2n, [], 1n],
      ['added', 1n, [], 2n],
    ]);
  });
});
