/**
 * The memory key index saved at a clean stop (saved-index-file.ts): taken back at the next start
 * instead of built from the lake — the same entries a fresh build gives, the upserts after it
 * correct — and refused, the index built from the lake instead, whenever the file does not hold the
 * table as it is: a commit after the save, another key, a damaged or truncated file. Numeric and
 * string keys (a composite key), and slots a compaction freed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TableIdentifier } from '../../../src/iceberg/metadata/catalog.js';
import type { DataFile } from '../../../src/iceberg/spec/data-file.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import { loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { buildKeyIndex, MemoryKeyIndex } from '../../../src/iceberg/keyindex/key-index.js';
import { saveMemoryIndex, takeMemoryIndex } from '../../../src/iceberg/keyindex/saved-index-file.js';
import { TableCommitter } from '../../../src/iceberg/checkpoint/index.js';
import { insert, removeKey, update } from '../../../src/iceberg/writer/index.js';
import { TableKey } from '../../../src/iceberg/keyindex/table-key.js';
import type { Row } from '../../../src/model/values.js';
import { prng } from '../../../src/util/prng.js';
import { lakeTableRows } from '../../e2e/support/lake-compare.js';
import { newTable, tempWarehouse, type Warehouse } from '../writer/support.js';

let w: Warehouse;
let stateRoot: string;
beforeAll(async () => {
  w = await tempWarehouse('floe-savedindex-');
  stateRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'floe-state-'));
});
afterAll(async () => {
  await w.remove();
  fs.rmSync(stateRoot, { recursive: true, force: true });
});

const enc = new TextEncoder();
const JOB = 'job-saved';

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
  return { id: t.identifier, stateDir: fs.mkdtempSync(path.join(stateRoot, 'run-')), model: new Map(), checkpoint: 0n, infos: [], composite };
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

function savedFile(run: Run, uuid: string): string {
  return path.join(run.stateDir, JOB, `${uuid}.keyindex.mem`);
}

/** The entries of the index a fresh build from the lake gives. */
async function freshEntries(run: Run): Promise<string[]> {
  const t = await loadCatalogTable(w.catalog, run.id);
  const schema = t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!;
  return entriesOf(await buildKeyIndex(t, TableKey.identifier(schema)));
}

function entriesOf(index: MemoryKeyIndex): string[] {
  return [...index.entries()].map(([k, f, p]) => `${typeof k}:${String(k)}@${f.filePath}:${p}`).sort();
}

describe('a memory key index saved at a clean stop', () => {
  for (const composite of [false, true]) {
    it(`${composite ? '(long, string) key' : 'long key'}: taken back at the next start (no build), the upserts after it correct; refused after a commit it does not hold`, async () => {
      const run = await newRun(composite);
      const rnd = prng(composite ? 23 : 17);
      let c = committer(run);
      for (let i = 0; i < 4; i++) await randomCheckpoint(c, run, rnd);
      expect(await c.saveKeyIndex()).toBe(true);
      c.close();
      const uuid = (await loadCatalogTable(w.catalog, run.id)).metadata.tableUuid;
      expect(fs.existsSync(savedFile(run, uuid))).toBe(true);

      // the next start takes it: nothing built, the file gone (the next commit makes it stale)
      c = committer(run);
      await randomCheckpoint(c, run, rnd);
      expect(c.keyIndexLoads).toMatchObject({ built: 0, restored: 1 });
      expect(fs.existsSync(savedFile(run, uuid))).toBe(false);
      await expectModel(run);
      for (let i = 0; i < 3; i++) await randomCheckpoint(c, run, rnd);
      await expectModel(run);
      expect(await c.saveKeyIndex()).toBe(true);
      c.close();

      // what a clean stop saved after those commits is what a build from the lake gives
      const t = await loadCatalogTable(w.catalog, run.id);
      const schema = t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!;
      const key = TableKey.identifier(schema);
      const identity = { tableUuid: uuid, keyFieldIds: key.fieldIds, keyTypes: JSON.stringify(key.types), schemaId: schema.schemaId };
      const copy = `${savedFile(run, uuid)}.copy`;
      fs.copyFileSync(savedFile(run, uuid), copy);
      const taken = await takeMemoryIndex(copy, t, identity);
      expect(taken.index && entriesOf(taken.index)).toEqual(await freshEntries(run));
      expect(taken.index!.snapshotId).toBe(t.metadata.currentSnapshotId);

      // a commit the saved index does not hold (another process of the job, or a crash after the
      // save): refused with the reason, built from the lake
      const other = new TableCommitter({ identifier: run.id, catalog: w.catalog, jobId: JOB });
      await randomCheckpoint(other, run, rnd, 5);
      c = committer(run);
      await randomCheckpoint(c, run, rnd);
      expect(c.keyIndexLoads).toMatchObject({ built: 1, restored: 0 });
      expect(run.infos.join('\n')).toMatch(/does not hold the table as it is now \(it holds snapshot \d+, the table is at \d+\); building it from the lake/);
      expect(fs.existsSync(savedFile(run, uuid))).toBe(false);
      await expectModel(run);
      c.close();
    });
  }

  it('a damaged, truncated or foreign file is refused (the index is built from the lake), never trusted', async () => {
    const run = await newRun();
    const rnd = prng(31);
    const c = committer(run);
    for (let i = 0; i < 3; i++) await randomCheckpoint(c, run, rnd);
    expect(await c.saveKeyIndex()).toBe(true);
    c.close();
    const t = await loadCatalogTable(w.catalog, run.id);
    const file = savedFile(run, t.metadata.tableUuid);
    const good = fs.readFileSync(file);
    const schema = t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!;
    const key = TableKey.identifier(schema);
    const identity = { tableUuid: t.metadata.tableUuid, keyFieldIds: key.fieldIds, keyTypes: JSON.stringify(key.types), schemaId: schema.schemaId };
    const attempt = async (bytes: Uint8Array, id = identity): Promise<string | undefined> => {
      fs.writeFileSync(file, bytes);
      const taken = await takeMemoryIndex(file, t, id);
      expect(fs.existsSync(file), 'taken or refused, the file is gone').toBe(false);
      return taken.index ? undefined : taken.why;
    };
    expect(await attempt(good)).toBeUndefined();
    const flipped = Buffer.from(good);
    flipped[flipped.length - 100] ^= 0x40; // a bit in the entries
    expect(await attempt(flipped)).toMatch(/checksum does not match/);
    expect(await attempt(good.subarray(0, good.length - 9))).toMatch(/bytes, its header says/);
    expect(await attempt(Buffer.from('not an index at all, just some bytes'))).toMatch(/magic/);
    expect(await attempt(good, { ...identity, tableUuid: 'another' })).toMatch(/of table .* not another/);
    expect(await attempt(good, { ...identity, keyTypes: '["int"]' })).toMatch(/another key/);
    expect(await attempt(good, { ...identity, schemaId: 9 })).toMatch(/schema 0, the table's is 9/);
    expect((await takeMemoryIndex(file, t, identity)).index).toBeUndefined();
    expect(await takeMemoryIndex(file, t, identity)).toMatchObject({ missing: true });
    // through the committer: a damaged file gives a build, and the table stays right
    fs.writeFileSync(file, flipped);
    const c2 = committer(run);
    await randomCheckpoint(c2, run, rnd);
    expect(c2.keyIndexLoads).toMatchObject({ built: 1, restored: 0 });
    await expectModel(run);
    c2.close();
  });

  it('freed slots (a compaction removed their files) and a slot naming a file the table no longer holds', async () => {
    const run = await newRun();
    const rnd = prng(41);
    const c = committer(run);
    for (let i = 0; i < 3; i++) await randomCheckpoint(c, run, rnd);
    c.close();
    const t = await loadCatalogTable(w.catalog, run.id);
    const schema = t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!;
    const key = TableKey.identifier(schema);
    const identity = { tableUuid: t.metadata.tableUuid, keyFieldIds: key.fieldIds, keyTypes: JSON.stringify(key.types), schemaId: schema.schemaId };
    const built = await buildKeyIndex(t, key);
    const entries = [...built.entries()];
    // a slot freed in between: an index whose first file was rewritten away (no key points at it any more)
    const gone = { filePath: `${t.metadata.location}/data/compacted-away.parquet` } as DataFile;
    const index = new MemoryKeyIndex(built.snapshotId);
    index.set('never-looked-up', gone, 0);
    index.delete('never-looked-up');
    index.rewrite([], [gone.filePath], [], built.snapshotId!);
    for (const [k, f, p] of entries) index.set(k, f, p);
    const file = path.join(run.stateDir, 'freed.keyindex.mem');
    await saveMemoryIndex(file, identity, index.saved());
    const taken = await takeMemoryIndex(file, t, identity);
    expect(taken.index && entriesOf(taken.index)).toEqual(entriesOf(built));
    // the freed slot is used again by the next file
    const reused = taken.index!;
    reused.set(12345, entries[0]![1], 7);
    expect(reused.get(12345)).toEqual({ file: entries[0]![1], pos: 7 });

    // a slot naming a file that is not live: refused
    const stale = new MemoryKeyIndex(built.snapshotId);
    for (const [k, f, p] of entries) stale.set(k, f, p);
    stale.set(999_999, gone, 0);
    await saveMemoryIndex(file, identity, stale.saved());
    expect(await takeMemoryIndex(file, t, identity)).toMatchObject({ index: undefined, why: expect.stringMatching(/compacted-away\.parquet, which is not a live data file/) });
  });

  it('below saveMinRows nothing is saved (a small index is built in no time)', async () => {
    const run = await newRun();
    const c = new TableCommitter({ identifier: run.id, catalog: w.catalog, jobId: JOB, keyIndex: { stateDir: run.stateDir, saveMinRows: 1000 } });
    await randomCheckpoint(c, run, prng(3));
    expect(await c.saveKeyIndex()).toBe(false);
    c.close();
    expect(fs.readdirSync(run.stateDir)).toEqual([]);
  });
});
