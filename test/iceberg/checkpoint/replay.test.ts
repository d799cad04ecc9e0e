/**
 * Replay safety (docs/design.md §4): a crash at each commit failure point, then a fresh committer — as a
 * restarted process would create — resuming every table from `lastCommitted` and re-delivering the
 * rest of the stream, with the same checkpoint ids (a deterministic cut) or with new ones (a different
 * cut). Also: the whole stream delivered twice. Afterwards each table equals the model, no checkpoint
 * id appears twice along main, no data file was added twice, and every file any snapshot refers to
 * still exists (auditTable).
 *
 * Two tables take the same stream — v2 unpartitioned and v3 partitioned by a non-key column — so a
 * crash can also leave one table a checkpoint ahead of the other. The crash is an in-process throw
 * from `armFailpoint` at the n-th hit; the failed committer is then abandoned.
 *
 * The filesystem catalog has no failpoints of its own inside the commit (its create-if-absent is the
 * swap); when a probe shows that, the two catalog-side points are hit by a thin wrapper just before
 * and after its `commitTable`. The SQL catalog on SQLite hits them itself (after writing the metadata
 * file, after the compare-and-swap) and runs the same scenarios.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Catalog, TableIdentifier } from '../../../src/iceberg/metadata/catalog.js';
import { FileSystemCatalog } from '../../../src/catalog/filesystem/filesystem-catalog.js';
import { SqlCatalog } from '../../../src/catalog/sql/sql-catalog.js';
import { createTable, ensureUnpartitionedSpec, loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { TableCommitter, lastCommitted, type TableCommitOutcome, type TableCommitterOptions } from '../../../src/iceberg/checkpoint/index.js';
import { type RowChange } from '../../../src/iceberg/writer/index.js';
import { FloeError } from '../../../src/util/errors.js';
import { armFailpoint, disarmFailpoints, failpoint, failpointTriggered, type FailPointName } from '../../../src/util/failpoints.js';
import { applyToModel, auditTable, cutCheckpoints, expectTableEquals, generateChanges, type Model } from '../writer/change-stream.js';
import { BY_GROUP, keyedSchema, prng } from '../writer/support.js';
import { withCommitHook } from '../../support/commit-hook.js';

const FAILPOINTS: FailPointName[] = ['after-data-files', 'after-manifests', 'after-manifest-list', 'after-metadata-file', 'after-catalog-swap'];
const JOB = 'replay-job';

interface Checkpoint {
  id: bigint;
  start: number;
  end: number;
}

let root: string;
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'floe-replay-'));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
afterEach(() => disarmFailpoints());

let dirs = 0;
async function freshCatalog(kind: 'filesystem' | 'sqlite'): Promise<Catalog> {
  const dir = path.join(root, `w${++dirs}`);
  fs.mkdirSync(dir);
  const catalog: Catalog =
    kind === 'filesystem'
      ? new FileSystemCatalog({ warehouse: path.join(dir, 'warehouse'), warn: () => {} })
      : new SqlCatalog({ url: `sqlite:${path.join(dir, 'catalog.db')}`, warehouse: path.join(dir, 'warehouse'), warn: () => {} });
  await catalog.createNamespace(['db']);
  return catalog;
}

/** Whether the catalog's own commitTable hits `name` (probed on a scratch table). */
async function catalogHits(catalog: Catalog, name: FailPointName): Promise<boolean> {
  const id = { namespace: ['db'], name: `probe_${name.replace(/-/g, '_')}` };
  const t = await catalog.createTable(id, { schema: keyedSchema(), formatVersion: 2 });
  armFailpoint(name);
  try {
    await catalog.commitTable(id, [{ type: 'assert-table-uuid', uuid: t.metadata.tableUuid }], [{ action: 'set-properties', updates: { probe: '1' } }]);
    return false;
  } catch (e) {
    if (String(e).includes(`failpoint ${name}`)) return true;
    throw e;
  } finally {
    disarmFailpoints();
    await catalog.dropTable(id);
  }
}

/** The catalog, with the catalog-side failpoints around commitTable when it does not hit them itself. */
async function withCatalogFailpoints(catalog: Catalog): Promise<Catalog> {
  const metadataFile = await catalogHits(catalog, 'after-metadata-file');
  const swap = await catalogHits(catalog, 'after-catalog-swap');
  if (metadataFile && swap) return catalog;
  return withCommitHook(catalog, async (commit) => {
    if (!metadataFile) await failpoint('after-metadata-file');
    const out = await commit();
    if (!swap) await failpoint('after-catalog-swap');
    return out;
  });
}

/** Waits until the armed failpoint froze the commit (the process "died" there). */
async function untilTriggered(point: FailPointName, pending: Promise<unknown>): Promise<void> {
  let settled: unknown;
  pending.then(
    () => (settled = 'resolved'),
    (e) => (settled = e),
  );
  for (let i = 0; i < 3000; i++) {
    if (settled !== undefined) throw new Error(`the commit was expected to freeze at ${point}, but it settled: ${String(settled)}`);
    if (failpointTriggered(point)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`failpoint ${point} never fired`);
}

/** Waits until `table` shows checkpoint `id` of the job (the frozen commit swapped the pointer). */
async function untilCommitted(catalog: Catalog, table: TableIdentifier, id: bigint, pending: Promise<unknown>): Promise<void> {
  let settled: unknown;
  pending.then(
    () => (settled = 'resolved'),
    (e) => (settled = e),
  );
  for (let i = 0; i < 3000; i++) {
    if (settled !== undefined) throw new Error(`the commit was expected to freeze after the swap, but it settled: ${String(settled)}`);
    const last = lastCommitted(await loadCatalogTable(catalog, table), JOB);
    if (last && last.checkpointId >= id) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`checkpoint ${id} never reached ${table.name}`);
}

async function createTables(catalog: Catalog): Promise<TableIdentifier[]> {
  const plain = await createTable(catalog, { namespace: ['db'], name: 'plain_v2' }, { schema: keyedSchema(), formatVersion: 2 });
  const parted = await createTable(catalog, { namespace: ['db'], name: 'parted_v3' }, { schema: keyedSchema(), partitionSpec: BY_GROUP, formatVersion: 3 });
  // Added up front so that every table commit hits each failpoint exactly once.
  await ensureUnpartitionedSpec(parted);
  return [plain.identifier, parted.identifier];
}

/**
 * Delivers checkpoints as the pipeline would: each table gets the changes after its own committed
 * position (`from`), then every checkpoint is committed with its end position as the source offset.
 */
async function deliver(committers: TableCommitter[], changes: RowChange[], checkpoints: Checkpoint[], from: number[]): Promise<void> {
  for (const cp of checkpoints) {
    for (const [t, committer] of committers.entries()) {
      const slice = changes.slice(Math.max(cp.start, from[t]), cp.end);
      if (slice.length > 0) await committer.write(slice);
    }
    // only the tables with changes commit (a coordinator that never commits idle tables)
    for (const committer of committers) if (committer.bufferedChanges > 0) await committer.commit(cp.id, JSON.stringify({ pos: cp.end }));
  }
}

/** One committer per table, as the pipeline keeps them. */
function committersFor(catalog: Catalog, tables: TableIdentifier[], options: Partial<TableCommitterOptions> = {}): TableCommitter[] {
  return tables.map((identifier) => new TableCommitter({ catalog, identifier, jobId: JOB, ...options }));
}

function checkpointsOf(rand: () => number, changes: RowChange[], start: number, firstId: bigint, maxSize: number): Checkpoint[] {
  const positions = changes.map((_, i) => i).slice(start);
  const out: Checkpoint[] = [];
  let id = firstId;
  for (const slice of cutCheckpoints(rand, positions, maxSize)) out.push({ id: id++, start: slice[0], end: slice[slice.length - 1] + 1 });
  return out;
}

async function resumePoint(catalog: Catalog, tables: TableIdentifier[]): Promise<{ committers: TableCommitter[]; from: number[]; lastIds: bigint[] }> {
  const committers = committersFor(catalog, tables);
  const from: number[] = [];
  const lastIds: bigint[] = [];
  for (const committer of committers) {
    const last = await committer.open();
    from.push(last ? (JSON.parse(last.sourceOffset) as { pos: number }).pos : 0);
    lastIds.push(last?.checkpointId ?? 0n);
  }
  return { committers, from, lastIds };
}

async function expectConverged(catalog: Catalog, tables: TableIdentifier[], model: Model, what: string): Promise<string[][]> {
  const chains: string[][] = [];
  for (const id of tables) {
    const table = await loadCatalogTable(catalog, id);
    await expectTableEquals(table, model, `${what}: ${id.name}`);
    chains.push((await auditTable(table, JOB)).checkpointIds);
  }
  return chains;
}

function streamFor(seed: number): { changes: RowChange[]; model: Model; rand: () => number } {
  const rand = prng(seed);
  const changes = generateChanges(rand, 160, 70);
  const model: Model = new Map();
  for (const c of changes) applyToModel(model, c);
  return { changes, model, rand };
}

describe('replay after a crash at each failure point', () => {
  const scenarios: { catalog: 'filesystem' | 'sqlite'; point: FailPointName; sameIds: boolean; crashTable: number }[] = [];
  FAILPOINTS.forEach((point, i) => {
    for (const sameIds of [true, false]) scenarios.push({ catalog: 'filesystem', point, sameIds, crashTable: (i + (sameIds ? 0 : 1)) % 2 });
  });
  for (const point of ['after-metadata-file', 'after-catalog-swap'] as FailPointName[]) scenarios.push({ catalog: 'sqlite', point, sameIds: false, crashTable: 1 });

  for (const s of scenarios) {
    const title = `${s.catalog}: crash ${s.point} on the ${s.crashTable === 0 ? 'first (v2)' : 'second (v3)'} table, resumed with ${s.sameIds ? 'the same' : 'new'} checkpoint ids`;
    it(title, async () => {
      const catalog = await withCatalogFailpoints(await freshCatalog(s.catalog));
      const tables = await createTables(catalog);
      const { changes, model, rand } = streamFor(1000 + scenarios.indexOf(s));
      const plan = checkpointsOf(rand, changes, 0, 1n, 30);
      const crashAt = Math.min(plan.length - 2, 2 + Math.floor(rand() * (plan.length - 3))); // 0-based index of the failing checkpoint

      const first = committersFor(catalog, tables);
      await deliver(first, changes, plan.slice(0, crashAt), [0, 0]);
      // Points at or after the catalog call: the process dies there — a frozen promise is that crash
      // in-process (a throw there is an outcome the caller cannot know, which the committer resolves by
      // reloading; see the unknown-outcome test below). In the filesystem catalog creating v<N> is the
      // swap, so 'after-metadata-file' has landed there; in the SQL catalog it comes before the swap.
      const landed = s.point === 'after-catalog-swap' || (s.point === 'after-metadata-file' && s.catalog === 'filesystem');
      if (s.point === 'after-catalog-swap' || s.point === 'after-metadata-file') {
        armFailpoint(s.point, { after: s.crashTable, action: 'hang' });
        const pending = deliver(first, changes, [plan[crashAt]], [0, 0]);
        if (landed) await untilCommitted(catalog, tables[s.crashTable], plan[crashAt].id, pending);
        else await untilTriggered(s.point, pending);
      } else {
        armFailpoint(s.point, { after: s.crashTable });
        await expect(deliver(first, changes, [plan[crashAt]], [0, 0])).rejects.toThrow(new RegExp(`failpoint ${s.point}`));
      }
      disarmFailpoints();

      // Restart: where does each table stand?
      const { committers, from, lastIds } = await resumePoint(catalog, tables);
      const expectedIds = tables.map((_, t) => (t < s.crashTable || (t === s.crashTable && landed) ? plan[crashAt].id : plan[crashAt - 1].id));
      expect(lastIds).toEqual(expectedIds);
      expect(from).toEqual(expectedIds.map((id) => plan[Number(id) - 1].end));

      const resumeFrom = Math.min(...from);
      if (s.sameIds) {
        // The same cut and ids from the slowest table's position, delivered to EVERY table unfiltered:
        // a table that already holds a re-delivered checkpoint must skip it.
        const rest = plan.filter((cp) => cp.end > resumeFrom);
        await deliver(committers, changes, rest, tables.map(() => resumeFrom));
      } else {
        // A different cut with new ids; each table gets the changes after its own position (pipeline).
        const next = lastIds.reduce((a, b) => (a > b ? a : b)) + 1n;
        await deliver(committers, changes, checkpointsOf(rand, changes, resumeFrom, next, 45), from);
      }

      const chains = await expectConverged(catalog, tables, model, title);
      if (s.sameIds) for (const chain of chains) expect(chain).toEqual(plan.map((cp) => String(cp.id)));
    });
  }
});

/** Two fresh tables given stream `seed` once, in checkpoints of up to 50 changes from id 1. */
async function deliveredOnce(seed: number): Promise<ReturnType<typeof streamFor> & { catalog: Catalog; tables: TableIdentifier[]; plan: Checkpoint[] }> {
  const catalog = await freshCatalog('filesystem');
  const tables = await createTables(catalog);
  const { changes, model, rand } = streamFor(seed);
  const plan = checkpointsOf(rand, changes, 0, 1n, 50);
  await deliver(committersFor(catalog, tables), changes, plan, [0, 0]);
  return { catalog, tables, changes, model, rand, plan };
}

describe('delivering the whole stream twice', () => {
  it('with the same checkpoint ids: every checkpoint is skipped and nothing changes', async () => {
    const { catalog, tables, changes, model, plan } = await deliveredOnce(77);
    const before = await Promise.all(tables.map(async (id) => (await loadCatalogTable(catalog, id)).metadata.snapshots.length));

    const again = committersFor(catalog, tables);
    for (const cp of plan) {
      for (const c of again) await c.write(changes.slice(cp.start, cp.end));
      const out = { tables: [] as TableCommitOutcome[] };
      for (const c of again) out.tables.push(await c.commit(cp.id, JSON.stringify({ pos: cp.end })));
      expect(out.tables.map((t) => t.status)).toEqual(['already-committed', 'already-committed']);
    }
    const after = await Promise.all(tables.map(async (id) => (await loadCatalogTable(catalog, id)).metadata.snapshots.length));
    expect(after).toEqual(before);
    await expectConverged(catalog, tables, model, 'same ids twice');
  });

  it('with new checkpoint ids and no offset filtering: upserts absorb the replay', async () => {
    const { catalog, tables, changes, model, rand, plan } = await deliveredOnce(78);
    const replay = checkpointsOf(rand, changes, 0, plan[plan.length - 1].id + 1n, 80);
    await deliver(committersFor(catalog, tables), changes, replay, [0, 0]);
    const chains = await expectConverged(catalog, tables, model, 'new ids twice');
    for (const chain of chains) expect(chain).toEqual([...plan, ...replay].map((cp) => String(cp.id)));
  });
});

describe('a commit whose outcome is unknown', () => {
  it('is resolved by looking for the checkpoint: the landed commit counts, nothing it references is deleted', async () => {
    const base = await freshCatalog('filesystem');
    // The catalog swaps the pointer, then the caller sees a lost response (commit-state-unknown).
    let failNext = 0;
    const catalog = withCommitHook(base, async (commit) => {
      const out = await commit();
      if (failNext > 0) {
        failNext--;
        throw new FloeError('catalog.test', 'commit-state-unknown', 'response lost after the swap (test)');
      }
      return out;
    });
    const tables = await createTables(catalog);
    const { changes, model, rand } = streamFor(79);
    const plan = checkpointsOf(rand, changes, 0, 1n, 60);
    const committers = committersFor(catalog, tables, { retry: { minWaitMs: 1, maxWaitMs: 2 } });
    for (const [i, cp] of plan.entries()) {
      if (i % 2 === 1) failNext = 1;
      await deliver(committers, changes, [cp], [0, 0]);
    }
    const chains = await expectConverged(base, tables, model, 'unknown outcomes');
    for (const chain of chains) expect(chain).toEqual(plan.map((cp) => String(cp.id)));
  });
});
