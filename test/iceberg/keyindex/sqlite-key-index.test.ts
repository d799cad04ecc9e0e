/**
 * The disk-backed key index (sqlite-key-index.ts): the same answers as the memory index on random
 * operations; deletion-vector upserts through it with a tiny memory budget (the table equals the
 * model, no equality delete); and every start-up case — kept (no rebuild), deleted, corrupted,
 * behind by commits of another process (replayed), killed between the Iceberg commit and the index
 * update (replayed), behind a foreign rewrite (rebuilt, never a DV against a removed file).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TableIdentifier } from '../../../src/iceberg/metadata/catalog.js';
import type { DataFile } from '../../../src/iceberg/spec/data-file.js';
import { currentSnapshot } from '../../../src/iceberg/spec/snapshot-ids.js';
import { commitSnapshot, loadCatalogTable, readManifestEntries, readSnapshotManifests } from '../../../src/iceberg/table/index.js';
import { keyIndexDelta } from '../../../src/iceberg/keyindex/key-index.js';
import { buildKeyIndex } from '../../../src/iceberg/keyindex/key-index-build.js';
import { MemoryKeyIndex } from '../../../src/iceberg/keyindex/memory-key-index.js';
import { DiskKeyIndex } from '../../../src/iceberg/keyindex/sqlite-key-index.js';
import { openDiskKeyIndex } from '../../../src/iceberg/keyindex/sqlite-index-open.js';
import { TableCommitter } from '../../../src/iceberg/checkpoint/index.js';
import { insert, removeKey, TableChangeWriter, update } from '../../../src/iceberg/writer/index.js';
import { TableKey, type KeyId } from '../../../src/iceberg/keyindex/table-key.js';
import type { Row } from '../../../src/model/values.js';
import { armFailpoint, disarmFailpoints } from '../../../src/util/failpoints.js';
import { prng } from '../../../src/util/prng.js';
import { lakeTableRows } from '../../e2e/support/lake-compare.js';
import { planScan } from '../../../src/iceberg/scan/scan-plan.js';
import { rewriteManifests } from '../../../src/iceberg/maintenance/rewrite-manifests.js';
import { newTable, useTempWarehouse } from '../writer/support.js';
import { useTempDirectory } from '../../support/temp-dir.js';

const w = useTempWarehouse('floe-diskindex-');
const stateRoot = useTempDirectory('floe-state-');
afterEach(() => disarmFailpoints());

describe('DiskKeyIndex against MemoryKeyIndex', () => {
  for (const seed of [1, 2, 3]) {
    it(`random sets, deletes and deltas give the same answers (seed ${seed}), also after reopening`, async () => {
      const rnd = prng(seed);
      const files = Array.from({ length: 5 }, (_, i) => ({ filePath: `s3://b/data/f${i}.parquet` }) as DataFile);
      // numeric and string keys mixed: a number never equals a string (5 vs 's5')
      const keyOf = (): KeyId => (rnd() < 0.5 ? Math.floor(rnd() * 300) - 50 : `s${Math.floor(rnd() * 300)}`);
      const dbPath = path.join(stateRoot(), `prop-${seed}`, 'x.keyindex.sqlite');
      const identity = { tableUuid: 'u', keyFieldIds: [1], keyTypes: '["long"]', schemaId: 0 };
      const mem = new MemoryKeyIndex(undefined);
      const disk = await DiskKeyIndex.build(dbPath, identity, undefined, async () => {});
      const universe = new Set<KeyId>();
      // as in a table: a row position holds one row, and a delta deletes the committed row of every
      // key it sets anew (an upsert) besides the keys it deletes
      const next = new Map<DataFile, number>();
      const place = (): [DataFile, number] => {
        const f = files[Math.floor(rnd() * files.length)]!;
        const pos = next.get(f) ?? Math.floor(rnd() * 2 ** 31);
        next.set(f, pos + 1);
        return [f, pos];
      };
      for (let step = 0; step < 2000; step++) {
        const r = rnd();
        if (r < 0.5) {
          const k = keyOf();
          const [f, pos] = place();
          mem.set(k, f, pos);
          disk.set(k, f, pos);
          universe.add(k);
        } else if (r < 0.8) {
          const k = keyOf();
          mem.delete(k);
          disk.delete(k);
        } else {
          const set = new Map<KeyId, [DataFile, number]>();
          for (let i = Math.floor(rnd() * 20); i > 0; i--) set.set(keyOf(), place());
          const deleted = new Set([...set.keys()].filter((k) => mem.get(k) !== undefined));
          for (let i = Math.floor(rnd() * 20); i > 0; i--) {
            const k = keyOf();
            if (mem.get(k) !== undefined) deleted.add(k);
          }
          const delta = keyIndexDelta([...set].map(([k, [f, pos]]) => [k, f, pos] as const), [...deleted]);
          for (const k of set.keys()) universe.add(k);
          const snap = BigInt(step);
          mem.apply(delta, snap);
          disk.apply(delta, snap);
          expect(disk.snapshotId).toBe(snap);
        }
        expect(disk.size).toBe(mem.size);
      }
      for (const k of universe) expect(disk.get(k), `key ${String(k)}`).toEqual(mem.get(k));
      expect([...disk.entries()].length).toBe(mem.size);
      // the stamp (snapshot and row count) is written with a delta: the last one seals the state
      mem.apply(keyIndexDelta([], []), 99999n);
      disk.apply(keyIndexDelta([], []), 99999n);
      disk.close();
      // reopened: the stamp, the count and every answer survive (files re-resolved by path)
      const opened = DiskKeyIndex.openExisting(dbPath);
      const tasks = files.map((file) => ({ file, sequenceNumber: 0n, deletes: { equality: [], position: [], dv: undefined } }));
      const r = await opened.index.catchUp(opened.stamp!, opened.files, identity, mem.snapshotId, tasks, undefined as never);
      expect(r).toEqual({ replayedFiles: 0 });
      expect(opened.index.size).toBe(mem.size);
      for (const k of universe) expect(opened.index.get(k)?.pos).toBe(mem.get(k)?.pos);
      opened.index.close();
    });
  }
});

describe('DiskKeyIndex: what a database must match', () => {
  it('an interrupted build (no stamp), another table, another key: each refused with the reason', async () => {
    const dbPath = path.join(stateRoot(), 'identity', 'x.keyindex.sqlite');
    DiskKeyIndex.create(dbPath).close();
    expect(await openDiskKeyIndex(dbPath, undefined as never, undefined as never, undefined as never)).toEqual({ index: undefined, why: 'its build was interrupted (no stamp)', missing: false });
    const identity = { tableUuid: 'u1', keyFieldIds: [1], keyTypes: '["long"]', schemaId: 3 };
    (await DiskKeyIndex.build(dbPath, identity, 5n, async () => {})).close();
    const tryWith = async (id: typeof identity): Promise<unknown> => {
      const o = DiskKeyIndex.openExisting(dbPath);
      try {
        return await o.index.catchUp(o.stamp!, o.files, id, 5n, [], undefined as never);
      } finally {
        o.index.close();
      }
    };
    expect(await tryWith(identity)).toEqual({ replayedFiles: 0 });
    // a schema change that keeps the key's types keeps the index
    expect(await tryWith({ ...identity, schemaId: 4 })).toEqual({ replayedFiles: 0 });
    expect(await tryWith({ ...identity, tableUuid: 'u2' })).toEqual({ stale: 'it belongs to table u1' });
    expect(await tryWith({ ...identity, keyFieldIds: [1, 2] })).toEqual({ stale: 'key field ids [1], the table\'s are [1,2]' });
    expect(await tryWith({ ...identity, keyTypes: '["int"]' })).toMatchObject({ stale: expect.stringMatching(/^key types \["long"\], the table's are \["int"\]/) });
    // no such file: missing, not a warning
    expect(await openDiskKeyIndex(path.join(stateRoot(), 'nope.sqlite'), undefined as never, undefined as never, undefined as never)).toMatchObject({ index: undefined, missing: true });
  });
});

const enc = new TextEncoder();
const row = (id: bigint, grp: number, name: string): Row => [id, grp, name, '1.00', enc.encode(name)];

interface Run {
  id: TableIdentifier;
  stateDir: string;
  model: Map<bigint, string>;
  checkpoint: bigint;
  warnings: string[];
  infos: string[];
}

function committer(run: Run, jobId = 'job-disk'): TableCommitter {
  return new TableCommitter({ identifier: run.id, catalog: w.catalog, jobId, keyIndex: { stateDir: run.stateDir, memoryMaxRows: 10 }, warn: (m) => run.warnings.push(m), info: (m) => run.infos.push(m) });
}

/** A checkpoint of seeded random inserts, updates and deletes, mirrored in the model. */
async function randomCheckpoint(c: TableCommitter, run: Run, rnd: () => number, changes = 12): Promise<void> {
  const batch = [];
  for (let i = 0; i < changes; i++) {
    const k = BigInt(Math.floor(rnd() * 60));
    const name = `n${run.checkpoint}-${i}`;
    if (rnd() < 0.2 && run.model.has(k)) {
      batch.push(removeKey([k]));
      run.model.delete(k);
    } else {
      batch.push(run.model.has(k) ? update(row(k, 1, name)) : insert(row(k, 1, name)));
      run.model.set(k, name);
    }
  }
  await c.write(batch);
  expect((await c.commit(++run.checkpoint, '{}')).status).toBe('committed');
}

async function expectModel(run: Run): Promise<void> {
  const rows = (await lakeTableRows(w.catalog, run.id)).rows.map((r) => r.split('|'));
  const actual = rows.map((p) => `${p[0]}:${p[2]}`).sort();
  const expected = [...run.model].map(([k, n]) => `L${k}:"${n}"`).sort();
  expect(actual).toEqual(expected);
  const t = await loadCatalogTable(w.catalog, run.id);
  for (const s of t.metadata.snapshots) expect(s.summary['added-equality-delete-files'], `snapshot ${s.snapshotId}`).toBeUndefined();
}

async function newRun(): Promise<Run> {
  const t = await newTable(w, { formatVersion: 3 });
  return { id: t.identifier, stateDir: fs.mkdtempSync(path.join(stateRoot(), 'run-')), model: new Map(), checkpoint: 0n, warnings: [], infos: [] };
}

/** The index on disk (the committer closed) holds exactly what a fresh build from the lake holds. */
async function expectIndexMatchesLake(run: Run, uuid: string): Promise<void> {
  const t = await loadCatalogTable(w.catalog, run.id);
  const schema = t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!;
  const key = TableKey.identifier(schema);
  const fresh = await buildKeyIndex(t, key);
  const opened = DiskKeyIndex.openExisting(dbFile(run, uuid));
  try {
    const identity = { tableUuid: uuid, keyFieldIds: key.fieldIds, keyTypes: JSON.stringify(key.types), schemaId: schema.schemaId };
    const plan = await planScan(t.io, t.metadata);
    expect(await opened.index.catchUp(opened.stamp!, opened.files, identity, t.metadata.currentSnapshotId, plan.tasks, undefined as never)).toEqual({ replayedFiles: 0 });
    const onDisk = [...opened.index.entries()].map(([k, f, p]) => `${String(k)}@${f.filePath}:${p}`).sort();
    expect(onDisk).toEqual([...fresh.entries()].map(([k, f, p]) => `${String(k)}@${f.filePath}:${p}`).sort());
    expect(opened.index.size).toBe(fresh.size);
  } finally {
    opened.index.close();
  }
}

function dbFile(run: Run, uuid: string, jobId = 'job-disk'): string {
  return path.join(run.stateDir, jobId, `${uuid}.keyindex.sqlite`);
}

describe('TableCommitter with a disk key index (memoryMaxRows 10)', () => {
  it('upserts through the disk index, and a restart reuses, replays or rebuilds it as the state on disk demands', async () => {
    const run = await newRun();
    const rnd = prng(7);
    let c = committer(run);
    await c.open();
    for (let i = 0; i < 4; i++) await randomCheckpoint(c, run, rnd);
    await expectModel(run);
    // more than 10 live rows: the index went to disk (spilled from memory or built there)
    expect(c.keyIndexLoads.spilled + c.keyIndexLoads.builtOnDisk).toBeGreaterThan(0);
    const uuid = (await loadCatalogTable(w.catalog, run.id)).metadata.tableUuid;
    expect(fs.existsSync(dbFile(run, uuid))).toBe(true);
    c.close();

    // kept: the next start uses it as it is — no rebuild
    c = committer(run);
    await randomCheckpoint(c, run, rnd);
    expect(c.keyIndexLoads).toMatchObject({ built: 0, builtOnDisk: 0, reused: 1, replayed: 0 });
    await expectModel(run);
    c.close();
    await expectIndexMatchesLake(run, uuid);

    // deleted: rebuilt from the lake (no warning: nothing was wrong)
    fs.rmSync(dbFile(run, uuid));
    c = committer(run);
    await randomCheckpoint(c, run, rnd);
    expect(c.keyIndexLoads).toMatchObject({ builtOnDisk: 1, reused: 0 });
    expect(run.warnings).toEqual([]);
    await expectModel(run);
    c.close();
    await expectIndexMatchesLake(run, uuid);

    // corrupted: garbage bytes → a warning and a rebuild
    for (const suffix of ['-wal', '-shm']) fs.rmSync(dbFile(run, uuid) + suffix, { force: true });
    fs.writeFileSync(dbFile(run, uuid), Buffer.from('this is not a SQLite database at all, just garbage'.repeat(100)));
    c = committer(run);
    await randomCheckpoint(c, run, rnd);
    expect(c.keyIndexLoads).toMatchObject({ builtOnDisk: 1, reused: 0 });
    expect(run.warnings.join('\n')).toMatch(/key index .* cannot be used: unreadable .*rebuilding it from the lake/);
    run.warnings.length = 0;
    await expectModel(run);
    c.close();
    await expectIndexMatchesLake(run, uuid);

    // stale by a few commits (another process of the job without a state dir committed them):
    // the next start replays them — no rebuild
    const other = new TableCommitter({ identifier: run.id, catalog: w.catalog, jobId: 'job-disk' });
    const stampedAt = (await loadCatalogTable(w.catalog, run.id)).metadata.currentSnapshotId;
    // small commits, so that they touch fewer files than the table has; one a pure delete (its
    // key must leave the index, not linger pointing at a deleted row)
    const gone = [...run.model.keys()][0];
    await other.write([removeKey([gone])]);
    run.model.delete(gone);
    expect((await other.commit(++run.checkpoint, '{}')).status).toBe('committed');
    for (let i = 0; i < 2; i++) await randomCheckpoint(other, run, rnd, 1);
    c = committer(run);
    await randomCheckpoint(c, run, rnd);
    expect(c.keyIndexLoads).toMatchObject({ built: 0, builtOnDisk: 0, reused: 0, replayed: 1 });
    // only the files those commits added or put DVs on were read — not every live file
    const snaps = (await loadCatalogTable(w.catalog, run.id)).metadata.snapshots;
    const after = snaps.slice(snaps.findIndex((s) => s.snapshotId === stampedAt) + 1, -1);
    expect(after).toHaveLength(3);
    const touched = after.reduce((n, s) => n + Number(s.summary['added-data-files'] ?? 0) + Number(s.summary['added-dvs'] ?? 0), 0);
    const replayed = Number(/\((\d+) data file\(s\) read\)/.exec(run.infos.find((m) => m.includes('caught up'))!)![1]);
    expect(replayed).toBeGreaterThan(0);
    expect(replayed).toBeLessThanOrEqual(touched);
    const liveFiles = Number(snaps.at(-2)!.summary['total-data-files']);
    expect(replayed).toBeLessThan(liveFiles);
    await expectModel(run);
    c.close();
    await expectIndexMatchesLake(run, uuid);

    // killed between the Iceberg commit and the index update: the stamp is the parent's; replayed
    c = committer(run);
    await randomCheckpoint(c, run, rnd);
    armFailpoint('key-index-before-apply');
    await expect(randomCheckpoint(c, run, rnd)).rejects.toThrow(/key-index-before-apply/);
    c.close();
    disarmFailpoints();
    c = committer(run);
    for (let i = 0; i < 3; i++) await randomCheckpoint(c, run, rnd);
    expect(c.keyIndexLoads).toMatchObject({ built: 0, builtOnDisk: 0, reused: 0, replayed: 1 });
    expect(run.warnings).toEqual([]);
    await expectModel(run);
    c.close();
    await expectIndexMatchesLake(run, uuid);
  });

  it('a foreign rewrite of a data file the index points at: rebuilt at the next start, never a DV against the removed file', async () => {
    const run = await newRun();
    const rnd = prng(11);
    let c = committer(run);
    for (let i = 0; i < 3; i++) await randomCheckpoint(c, run, rnd, 20);
    c.close();
    // another engine rewrites the first data file's live rows into a new file
    const t = await loadCatalogTable(w.catalog, run.id);
    const entries = [];
    for (const m of await readSnapshotManifests(t.io, currentSnapshot(t.metadata)!)) entries.push(...(await readManifestEntries(t.io, m)));
    const live = entries.filter((e) => e.status !== 'deleted');
    const dataFile = live.find((e) => e.dataFile.content === 'data')!.dataFile;
    const dvs = live.filter((e) => e.dataFile.referencedDataFile === dataFile.filePath).map((e) => e.dataFile);
    const before = (await lakeTableRows(w.catalog, run.id)).rows.length;
    const rewriter = new TableChangeWriter(t, { mode: 'append-only' });
    // the rewrite keeps every row: re-insert the live rows of that file (read through the index of a fresh build)
    const schema = t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!;
    const idx = await buildKeyIndex(t, TableKey.identifier(schema));
    const inFile = [...idx.entries()].filter(([, f]) => f.filePath === dataFile.filePath).map(([k]) => BigInt(k as number));
    await rewriter.applyAll(inFile.map((k) => insert(row(k, 1, run.model.get(k)!))));
    const rewritten = await rewriter.prepare();
    await commitSnapshot(t, { operation: 'replace', addedDataFiles: rewritten.dataFiles, removedFiles: [dataFile, ...dvs] }, { summary: { engine: 'compaction' } });
    expect((await lakeTableRows(w.catalog, run.id)).rows.length).toBe(before);

    c = committer(run);
    // update every key, so that any stale entry would aim a DV at the removed file
    await c.write([...run.model.keys()].map((k) => update(row(k, 1, `u${k}`))));
    for (const k of run.model.keys()) run.model.set(k, `u${k}`);
    const snap = (await c.commit(++run.checkpoint, '{}')).snapshot!;
    expect(run.warnings.join('\n')).toMatch(new RegExp(`data file ${dataFile.filePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} it points at is no longer live`));
    expect(c.keyIndexLoads).toMatchObject({ reused: 0, replayed: 0 });
    expect(c.keyIndexLoads.built + c.keyIndexLoads.builtOnDisk).toBe(1);
    const after = await loadCatalogTable(w.catalog, run.id);
    const added = [];
    for (const m of await readSnapshotManifests(after.io, snap)) added.push(...(await readManifestEntries(after.io, m)));
    expect(added.filter((e) => e.dataFile.referencedDataFile === dataFile.filePath)).toEqual([]);
    await expectModel(run);
    c.close();
    expect(c.keyIndexLoads.builtOnDisk).toBe(1);
    await expectIndexMatchesLake(run, after.metadata.tableUuid);
  });

  it('a manifest rewrite between checkpoints: the disk index is re-stamped, not rebuilt nor replayed, also across a restart', async () => {
    const t0 = await newTable(w, { formatVersion: 3, properties: { 'commit.manifest-merge.enabled': 'false' } });
    const run: Run = { id: t0.identifier, stateDir: fs.mkdtempSync(path.join(stateRoot(), 'run-')), model: new Map(), checkpoint: 0n, warnings: [], infos: [] };
    const rnd = prng(5);
    let c = committer(run);
    for (let i = 0; i < 6; i++) await randomCheckpoint(c, run, rnd);
    const loads = { ...c.keyIndexLoads };
    expect(loads.spilled + loads.builtOnDisk).toBe(1);
    const r = await rewriteManifests(await loadCatalogTable(w.catalog, run.id), { minManifests: 2 });
    expect(r.skipped).toBeUndefined();
    for (let i = 0; i < 2; i++) await randomCheckpoint(c, run, rnd);
    expect(c.keyIndexLoads).toEqual(loads);
    await expectModel(run);
    expect((await rewriteManifests(await loadCatalogTable(w.catalog, run.id), { minManifests: 2 })).skipped).toBeUndefined();
    c.close();
    // a restart after another rewrite: the stamp's snapshot is the rewrite's parent — caught up
    // without reading a data file
    c = committer(run);
    await randomCheckpoint(c, run, rnd);
    expect(c.keyIndexLoads).toMatchObject({ built: 0, builtOnDisk: 0, spilled: 0, reused: 1, replayed: 0 });
    await expectModel(run);
    c.close();
    await expectIndexMatchesLake(run, (await loadCatalogTable(w.catalog, run.id)).metadata.tableUuid);
  });
});
