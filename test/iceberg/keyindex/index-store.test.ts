/**
 * The memory key index persisted under the state directory (index-store.ts: an image, then the
 * patches of the commits after it): written as commits land, taken back at the next start — after a
 * clean stop or a crash — instead of built from the lake, the same entries a fresh build gives and
 * the upserts after it correct; caught up from the lake (key-index-catch-up.ts) when the table has a
 * commit it does not hold; refused, the index built from the lake instead, when the image is
 * damaged, truncated or another table's or key's; a torn log ends the replay. Numeric and string
 * keys (a composite key).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TableIdentifier } from '../../../src/iceberg/metadata/catalog.js';
import type { DataFile } from '../../../src/iceberg/spec/data-file.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import { commitSnapshot, loadCatalogTable, readManifestEntries, readSnapshotManifests } from '../../../src/iceberg/table/index.js';
import { currentSnapshot } from '../../../src/iceberg/spec/snapshot-ids.js';
import { buildKeyIndex } from '../../../src/iceberg/keyindex/key-index-build.js';
import { catchUpFromLake } from '../../../src/iceberg/keyindex/key-index-catch-up.js';
import type { FileIO } from '../../../src/io/file-io.js';
import { MemoryKeyIndex } from '../../../src/iceberg/keyindex/memory-key-index.js';
import { loadStoredIndex } from '../../../src/iceberg/keyindex/index-store.js';
import { TableCommitter } from '../../../src/iceberg/checkpoint/index.js';
import { insert, removeKey, TableChangeWriter, update } from '../../../src/iceberg/writer/index.js';
import { TableKey } from '../../../src/iceberg/keyindex/table-key.js';
import type { Row } from '../../../src/model/values.js';
import { prng } from '../../../src/util/prng.js';
import { lakeTableRows } from '../../e2e/support/lake-compare.js';
import { newTable, useTempWarehouse } from '../writer/support.js';
import { useTempDirectory } from '../../support/temp-dir.js';

const w = useTempWarehouse('floe-savedindex-');
const stateRoot = useTempDirectory('floe-state-');

const enc = new TextEncoder();
const JOB = 'job-persisted';

interface Run {
  id: TableIdentifier;
  stateDir: string;
  /** key text → name */
  model: Map<string, string>;
  checkpoint: bigint;
  infos: string[];
  composite: boolean;
}

/** id long key (or (id, code) with `composite`), grp int, name string, amount decimal, tag binary. */
function compositeSchema(): Schema {
  return new Schema(
    0,
    [
      { id: 1, name: 'id', required: true, type: Types.long },
      { id: 2, name: 'code', required: true, type: Types.string },
      { id: 3, name: 'name', required: false, type: Types.string },
    ],
    [1, 2],
  );
}

function rowOf(run: Run, k: number, name: string): Row {
  return run.composite ? [BigInt(k), `c${k % 7}`, name] : [BigInt(k), 1, name, '1.00', enc.encode(name)];
}

function keyOf(run: Run, k: number): unknown[] {
  return run.composite ? [BigInt(k), `c${k % 7}`] : [BigInt(k)];
}

function committer(run: Run): TableCommitter {
  return new TableCommitter({ identifier: run.id, catalog: w.catalog, jobId: JOB, keyIndex: { stateDir: run.stateDir, saveMinRows: 0 }, info: (m) => run.infos.push(m), warn: (m) => run.infos.push(`warn: ${m}`) });
}

async function newRun(composite = false): Promise<Run> {
  const t = await newTable(w, { formatVersion: 3, ...(composite ? { schema: compositeSchema() } : {}) });
  return { id: t.identifier, stateDir: fs.mkdtempSync(path.join(stateRoot(), 'run-')), model: new Map(), checkpoint: 0n, infos: [], composite };
}

/** A checkpoint of seeded random inserts, updates and deletes, mirrored in the model. */
async function randomCheckpoint(c: TableCommitter, run: Run, rnd: () => number, changes = 40): Promise<void> {
  const batch = [];
  for (let i = 0; i < changes; i++) {
    const k = Math.floor(rnd() * 150);
    const name = `n${run.checkpoint}-${i}`;
    if (rnd() < 0.2 && run.model.has(String(k))) {
      batch.push(removeKey(keyOf(run, k) as never));
      run.model.delete(String(k));
    } else {
      batch.push(run.model.has(String(k)) ? update(rowOf(run, k, name)) : insert(rowOf(run, k, name)));
      run.model.set(String(k), name);
    }
  }
  await c.write(batch);
  expect((await c.commit(++run.checkpoint, '{}')).status).toBe('committed');
}

async function expectModel(run: Run): Promise<void> {
  const rows = (await lakeTableRows(w.catalog, run.id)).rows.map((r) => r.split('|'));
  const actual = rows.map((p) => `${p[0]!.replace(/^L/, '')}:${p[2]}`).sort();
  const expected = [...run.model].map(([k, n]) => `${k}:"${n}"`).sort();
  expect(actual).toEqual(expected);
  const t = await loadCatalogTable(w.catalog, run.id);
  for (const s of t.metadata.snapshots) expect(s.summary['added-equality-delete-files'], `snapshot ${s.snapshotId}`).toBeUndefined();
}

function imageFile(run: Run, uuid: string): string {
  return path.join(run.stateDir, JOB, `${uuid}.keyindex`);
}

/** The entries of the index a fresh build from the lake gives. */
async function freshEntries(run: Run): Promise<string[]> {
  const t = await loadCatalogTable(w.catalog, run.id);
  const schema = t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!;
  return entriesOf(await buildKeyIndex(t, TableKey.identifier(schema)));
}

function entriesOf(index: { entries(): Iterable<readonly [unknown, DataFile, number]> }): string[] {
  return [...index.entries()].map(([k, f, p]) => `${typeof k}:${String(k)}@${f.filePath}:${p}`).sort();
}

/** The entries of the index the committer holds now. */
function heldEntries(c: TableCommitter): string[] {
  const index = (c as unknown as { keys: { current: MemoryKeyIndex | undefined } }).keys.current;
  if (!index) throw new Error('the committer holds no key index');
  return entriesOf(index);
}

/** The index persisted for the table, loaded as a start would (image, then the log's patches that follow). */
async function persistedEntries(run: Run): Promise<{ entries: string[]; snapshotId: bigint | undefined; patches: number }> {
  const t = await loadCatalogTable(w.catalog, run.id);
  const schema = t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!;
  const key = TableKey.identifier(schema);
  const stored = await loadStoredIndex(imageFile(run, t.metadata.tableUuid), { tableUuid: t.metadata.tableUuid, keyFieldIds: key.fieldIds, keyTypes: JSON.stringify(key.types) });
  if (!stored.patches) throw new Error(`no persisted index: ${stored.why}`);
  const index = new MemoryKeyIndex(undefined);
  let patches = 0;
  for (const p of stored.patches) {
    if (p.from !== 'image' && p.from !== index.snapshotId) break;
    index.applyPatch(p);
    patches++;
  }
  const live = await buildKeyIndex(t, key);
  for (const [, file] of live.entries()) index.useFile(file);
  return { entries: entriesOf(index), snapshotId: index.snapshotId, patches };
}

describe('a memory key index persisted under the state directory', () => {
  for (const composite of [false, true]) {
    it(`${composite ? '(long, string) key' : 'long key'}: persisted as commits land; taken back at the next start after a clean stop or a crash (no build), the upserts after it correct; caught up with a commit it does not hold`, async () => {
      const run = await newRun(composite);
      const rnd = prng(composite ? 23 : 17);
      let c = committer(run);
      for (let i = 0; i < 4; i++) await randomCheckpoint(c, run, rnd);
      const uuid = (await loadCatalogTable(w.catalog, run.id)).metadata.tableUuid;
      // no clean stop asked: what the commits persisted is the index
      await c.saveKeyIndex();
      const persisted = await persistedEntries(run);
      expect(persisted.entries).toEqual(await freshEntries(run));
      expect(persisted.entries).toEqual(heldEntries(c));
      expect(persisted.snapshotId).toBe((await loadCatalogTable(w.catalog, run.id)).metadata.currentSnapshotId);
      expect(fs.existsSync(`${imageFile(run, uuid)}.log`)).toBe(true);
      c.close();

      // the next start takes it: nothing built
      c = committer(run);
      await randomCheckpoint(c, run, rnd);
      expect(c.keyIndexLoads).toMatchObject({ built: 0, restored: 1, caughtUp: 0 });
      await expectModel(run);
      for (let i = 0; i < 3; i++) await randomCheckpoint(c, run, rnd);
      await expectModel(run);
      expect(heldEntries(c)).toEqual(await freshEntries(run));
      // a crash: the process ends without a clean stop (the committer is simply dropped)
      await (c as unknown as { keys: { store?: { flush(): Promise<boolean> } } }).keys.store?.flush();

      // a commit the persisted index does not hold (another process of the job, or a crash between
      // the commit and the index following it): caught up from the lake, not built
      const other = new TableCommitter({ identifier: run.id, catalog: w.catalog, jobId: JOB });
      await randomCheckpoint(other, run, rnd, 5);
      c = committer(run);
      await randomCheckpoint(c, run, rnd);
      expect(c.keyIndexLoads).toMatchObject({ built: 0, restored: 0, caughtUp: 1 });
      expect(run.infos.join('\n')).toMatch(/caught up with snapshot \d+ \(1 data file\(s\) read\)/);
      await expectModel(run);
      expect(heldEntries(c)).toEqual(await freshEntries(run));
      c.close();
    });
  }

  it('a damaged, truncated or foreign image is refused (the index is built from the lake), never trusted; a torn log ends its replay (the rest caught up from the lake)', async () => {
    const run = await newRun();
    const rnd = prng(31);
    let c = committer(run);
    for (let i = 0; i < 3; i++) await randomCheckpoint(c, run, rnd);
    expect(await c.saveKeyIndex()).toBe(true);
    c.close();
    const t = await loadCatalogTable(w.catalog, run.id);
    const file = imageFile(run, t.metadata.tableUuid);
    const good = fs.readFileSync(file);
    const schema = t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!;
    const key = TableKey.identifier(schema);
    const identity = { tableUuid: t.metadata.tableUuid, keyFieldIds: key.fieldIds, keyTypes: JSON.stringify(key.types) };
    const attempt = async (bytes: Uint8Array, id = identity): Promise<string | undefined> => {
      fs.writeFileSync(file, bytes);
      const loaded = await loadStoredIndex(file, id);
      return loaded.patches ? undefined : loaded.why;
    };
    expect(await attempt(good)).toBeUndefined();
    const flipped = Buffer.from(good);
    flipped[flipped.length - 20] ^= 0x40; // a bit in the index's sections
    expect(await attempt(flipped)).toMatch(/damaged/);
    expect(await attempt(good.subarray(0, good.length - 9))).toMatch(/damaged/);
    expect(await attempt(Buffer.from('not an index at all, just some bytes'))).toMatch(/magic/);
    expect(await attempt(good, { ...identity, tableUuid: 'another' })).toMatch(/of table .* not another/);
    expect(await attempt(good, { ...identity, keyTypes: '["int"]' })).toMatch(/another key/);
    fs.rmSync(file);
    expect(await loadStoredIndex(file, identity)).toMatchObject({ missing: true });
    // through the committer: a damaged image gives a build, and the table stays right
    fs.writeFileSync(file, flipped);
    c = committer(run);
    await randomCheckpoint(c, run, rnd);
    expect(c.keyIndexLoads).toMatchObject({ built: 1, restored: 0 });
    expect(run.infos.join('\n')).toMatch(/cannot be used \(its image is damaged/);
    await expectModel(run);
    for (let i = 0; i < 2; i++) await randomCheckpoint(c, run, rnd);
    await (c as unknown as { keys: { store?: { flush(): Promise<boolean> } } }).keys.store?.flush();
    c.close();
    // a torn last record of the log (a kill while it was written): the replay stops before it
    const log = `${file}.log`;
    const bytes = fs.readFileSync(log);
    fs.writeFileSync(log, bytes.subarray(0, bytes.length - 12));
    const before = await persistedEntries(run);
    expect(before.snapshotId).not.toBe((await loadCatalogTable(w.catalog, run.id)).metadata.currentSnapshotId);
    c = committer(run);
    await randomCheckpoint(c, run, rnd);
    expect(c.keyIndexLoads).toMatchObject({ built: 0, caughtUp: 1 });
    await expectModel(run);
    expect(heldEntries(c)).toEqual(await freshEntries(run));
    c.close();
  });

  it('another writer removed a data file it points at: not caught up but built from the lake, never a DV against the removed file', async () => {
    const run = await newRun();
    const rnd = prng(11);
    let c = committer(run);
    for (let i = 0; i < 3; i++) await randomCheckpoint(c, run, rnd);
    await c.saveKeyIndex();
    c.close();
    // another engine rewrites the first data file's live rows into a new file
    const t = await loadCatalogTable(w.catalog, run.id);
    const entries = [];
    for (const m of await readSnapshotManifests(t.io, currentSnapshot(t.metadata)!)) entries.push(...(await readManifestEntries(t.io, m)));
    const live = entries.filter((e) => e.status !== 'deleted');
    const dataFile = live.find((e) => e.dataFile.content === 'data')!.dataFile;
    const dvs = live.filter((e) => e.dataFile.referencedDataFile === dataFile.filePath).map((e) => e.dataFile);
    const schema = t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!;
    const inFile = [...(await buildKeyIndex(t, TableKey.identifier(schema))).entries()].filter(([, f]) => f.filePath === dataFile.filePath).map(([k]) => Number(k));
    const rewriter = new TableChangeWriter(t, { mode: 'append-only' });
    await rewriter.applyAll(inFile.map((k) => insert(rowOf(run, k, run.model.get(String(k))!))));
    const rewritten = await rewriter.prepare();
    await commitSnapshot(t, { operation: 'replace', addedDataFiles: rewritten.dataFiles, removedFiles: [dataFile, ...dvs] }, { summary: { engine: 'compaction' } });
    await expectModel(run);

    c = committer(run);
    // update every key, so that any stale entry would aim a DV at the removed file
    await c.write([...run.model.keys()].map((k) => update(rowOf(run, Number(k), `u${k}`))));
    for (const k of run.model.keys()) run.model.set(k, `u${k}`);
    expect((await c.commit(++run.checkpoint, '{}')).status).toBe('committed');
    expect(run.infos.join('\n')).toMatch(/cannot be caught up with the table's \d+ \(snapshot \d+ \(replace\) removed data files, and not as floe's compaction\); building it from the lake/);
    expect(c.keyIndexLoads).toMatchObject({ restored: 0, caughtUp: 0, built: 1 });
    await expectModel(run);
    c.close();
  });

  it('caught up over several commits from their files read side by side: the entries of a fresh build', async () => {
    const run = await newRun();
    const rnd = prng(41);
    const c = committer(run);
    await randomCheckpoint(c, run, rnd, 120);
    const before = await loadCatalogTable(w.catalog, run.id);
    const schema = before.metadata.schemas.find((s) => s.schemaId === before.metadata.currentSchemaId)!;
    const key = TableKey.identifier(schema);
    const index = await buildKeyIndex(before, key);
    // commits the index does not hold: a data file each, and DVs on the files before them
    for (let i = 0; i < 4; i++) await randomCheckpoint(c, run, rnd);
    c.close();
    const head = await loadCatalogTable(w.catalog, run.id);
    let inFlight = 0;
    let most = 0;
    const counted = <T>(read: () => Promise<T>): Promise<T> => {
      most = Math.max(most, ++inFlight);
      return read().finally(() => inFlight--);
    };
    const io: FileIO = Object.assign(Object.create(head.io) as FileIO, {
      read: (p: string) => counted(() => head.io.read(p)),
      readRange: (p: string, start: number, end: number) => counted(() => head.io.readRange(p, start, end)),
    });
    const caught = await catchUpFromLake(index, { metadata: head.metadata, io }, key, schema);
    expect(caught).toEqual({ filesRead: 4 });
    expect(entriesOf(index)).toEqual(await freshEntries(run));
    expect(most, 'reads in flight at once').toBeGreaterThan(1);
  });

  it('below saveMinRows nothing is persisted (a small index is built in no time)', async () => {
    const run = await newRun();
    const c = new TableCommitter({ identifier: run.id, catalog: w.catalog, jobId: JOB, keyIndex: { stateDir: run.stateDir, saveMinRows: 1000 } });
    await randomCheckpoint(c, run, prng(3));
    expect(await c.saveKeyIndex()).toBe(false);
    c.close();
    expect(fs.readdirSync(run.stateDir)).toEqual([]);
  });
});
