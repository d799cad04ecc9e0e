/**
 * The checkpointer's decisions, on real tables in a local filesystem catalog: which tables commit at
 * a checkpoint (changes, progress, idle tables every N checkpoints, a table still skipping what it
 * holds never), with which progress (`floe.source-offset` read back from the tables), increasing ids,
 * and refusing a checkpoint id some other process of the job already committed; when one is due early
 * (data files open, a run's first chunk); a schema change committed with the offset through its DDL.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import type { TableIdentifier } from '../../src/iceberg/metadata/catalog.js';
import { Schema } from '../../src/iceberg/spec/schema.js';
import { createTable, loadCatalogTable } from '../../src/iceberg/table/index.js';
import { currentSnapshot } from '../../src/iceberg/spec/snapshot-ids.js';
import { Types } from '../../src/iceberg/spec/types.js';
import { TableCommitter, lastCommitted } from '../../src/iceberg/checkpoint/index.js';
import { Checkpointer, type CheckpointTable } from '../../src/pipeline/checkpoint.js';
import { CAUGHT_UP_QUIET_MS, cadenceEventOf } from '../../src/pipeline/checkpoint-cadence.js';
import { silentLogger } from '../../src/pipeline/observe/logger.js';
import { decodeTableProgress, type TableProgress } from '../../src/pipeline/state.js';
import { readTableRows } from '../../src/iceberg/scan/index.js';
import { serializeOffset, type BinlogOffset } from '../../src/source/mysql/offset/offset.js';
import { chunkId, serializeChunk } from '../../src/source/mysql/snapshot/chunk.js';
import { parsePartitionSpec } from '../../src/iceberg/spec/partition-spec-text.js';
import type { SourceEvent } from '../../src/source/mysql/index.js';

/** The captured tables a checkpointer reads (the runner's one map of them). */
const tablesOf = (...tables: CheckpointTable[]): Map<string, CheckpointTable> => new Map(tables.map((t) => [t.key, t]));

const JOB = 'ckpt';
let dir: string;
let catalog: FileSystemCatalog;
const at = (pos: number): BinlogOffset => ({ file: 'binlog.000001', position: pos, serverId: 1 });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floe-ckpt-'));
  catalog = new FileSystemCatalog({ warehouse: dir });
  await catalog.createNamespace(['db']);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function table(name: string, working: TableProgress | undefined, skipUntil?: BinlogOffset): Promise<CheckpointTable> {
  const identifier: TableIdentifier = { namespace: ['db'], name };
  const t = await createTable(catalog, identifier, { schema: new Schema(0, [{ id: 1, name: 'id', required: true, type: Types.int }, { id: 2, name: 'v', required: false, type: Types.string }], [1]), formatVersion: 3 });
  return {
    key: `src.${name}`,
    identifier,
    io: t.io,
    location: t.metadata.location,
    committer: new TableCommitter({ catalog, identifier, jobId: JOB }),
    writerOptions: () => ({}),
    committed: working && skipUntil ? working : undefined,
    working,
    skipUntil,
    checkpointsSinceCommit: 0,
    lastCommitMs: Date.now(),
  };
}

/**
 * A streaming table at offset 10, added to a Checkpointer with a 500 ms interval whose clock is
 * `clock.now` (1 000 at first; the test moves it).
 */
async function streamingOnTestClock(name: string): Promise<{ t: CheckpointTable; k: Checkpointer; clock: { now: number } }> {
  const t = await table(name, { phase: 'streaming', offset: at(10) });
  const clock = { now: 1_000 };
  const k = new Checkpointer(tablesOf(t), 1n, { ...options, intervalMs: 500 }, silentLogger, undefined, () => clock.now);
  k.advance(at(10));
  return { t, k, clock };
}

async function stamp(t: CheckpointTable): Promise<{ checkpoint: bigint; progress: TableProgress } | undefined> {
  const loaded = await loadCatalogTable(catalog, t.identifier);
  const last = lastCommitted(loaded.metadata, JOB);
  if (!last) return undefined;
  return { checkpoint: last.snapshotCheckpointId, progress: await decodeTableProgress(last.sourceOffset, loaded.io, t.key, t.key) };
}

const options = { intervalMs: 1_000_000, maxBufferedChanges: 5, idleCheckpoints: 3, idleMaxMs: 1_000_000, concurrency: 2, whenCaughtUp: true, maxOpenFiles: 1_000_000 };

describe('checkpointer', () => {
  it('commits changed tables each checkpoint, idle ones every N, skipping ones never', async () => {
    const a = await table('a', { phase: 'streaming', offset: at(100) });
    const b = await table('b', { phase: 'streaming', offset: at(100) });
    // c holds everything up to 500 (a restart read the binlog from 100 for the others)
    const c = await table('c', { phase: 'streaming', offset: at(500) }, at(500));
    const k = new Checkpointer(tablesOf(a, b, c), 7n, options, silentLogger, undefined);
    k.advance(at(100));

    // 1: a and b were never committed: both record their start
    let report = await k.checkpoint('first');
    expect(report.committed.map((x) => x.key).sort()).toEqual(['src.a', 'src.b']);
    expect(await stamp(a)).toEqual({ checkpoint: 7n, progress: { phase: 'streaming', offset: at(100) } });

    // 2: changes in a; b idle; c skipping
    await k.ensureModes([[a, 'upsert']]);
    await k.write(a, [{ op: 'insert', after: [1, 'x'] }]);
    k.advance(at(200));
    expect(k.due()).toBeUndefined();
    report = await k.checkpoint('second');
    expect(report.checkpointId).toBe(8n);
    expect(report.committed.map((x) => x.key)).toEqual(['src.a']);
    expect((await stamp(a))!.progress.offset).toEqual(at(200));
    expect((await stamp(b))!.progress.offset).toEqual(at(100));

    // 3, 4: nothing routed but the stream moved: b records it on its third idle checkpoint
    k.advance(at(300));
    expect((await k.checkpoint('third')).committed).toEqual([]);
    k.advance(at(400));
    report = await k.checkpoint('fourth');
    expect(report.committed.map((x) => x.key)).toEqual(['src.b']); // a committed at 2: its turn comes at 5
    expect((await stamp(b))!.progress.offset).toEqual(at(400));
    expect(await stamp(c)).toBeUndefined(); // c never moves backwards to the others' position

    // a clean stop flushes every table whose offset moved, c once the stream passed its offset
    k.advance(at(450));
    await k.checkpoint('stop', { flushIdle: true });
    expect(await stamp(c)).toBeUndefined();
    k.advance(at(600));
    report = await k.checkpoint('stop', { flushIdle: true });
    expect(report.committed.map((x) => x.key).sort()).toEqual(['src.a', 'src.b', 'src.c']);
    expect((await stamp(c))!.progress.offset).toEqual(at(600));
    expect(c.skipUntil).toBeUndefined();

    // the size bound makes a checkpoint due
    await k.write(a, [1, 2, 3, 4, 5].map((i) => ({ op: 'insert' as const, after: [i + 10, 'y'] })));
    expect(k.due()).toMatch(/5 buffered changes/);
    await k.checkpoint('size');
    const rows = await readTableRows(await loadCatalogTable(catalog, a.identifier));
    expect(rows.map((r) => r[0]).sort()).toEqual([1, 11, 12, 13, 14, 15]);

    // ids only increase; no table holds one twice
    for (const t of [a, b, c]) {
      const m = (await loadCatalogTable(catalog, t.identifier)).metadata;
      const ids = m.snapshots.map((s) => BigInt(s.summary['floe.checkpoint-id']!));
      expect([...ids].sort((x, y) => (x < y ? -1 : 1))).toEqual(ids);
      expect(new Set(ids).size).toBe(ids.length);
    }
  });

  it('commits a table only after the tables it must follow have committed (commitFirst), at any concurrency', async () => {
    const tables = await Promise.all(['kc_child', 'kc_grand', 'kc_great', 'kc_other'].map((n) => table(n, { phase: 'streaming', offset: at(100) })));
    const [child, grand, great] = tables;
    const log: string[] = [];
    for (const t of tables) {
      const commit = t.committer.commit.bind(t.committer);
      t.committer.commit = async (...args) => {
        log.push(`start ${t.key}`);
        await new Promise((r) => setTimeout(r, 20));
        const out = await commit(...args);
        log.push(`end ${t.key}`);
        return out;
      };
    }
    const k = new Checkpointer(tablesOf(...tables), 1n, { ...options, concurrency: 4 }, silentLogger, undefined);
    k.commitFirst = (key) => (key === child.key ? [grand.key] : key === grand.key ? [great.key] : []);
    k.advance(at(100));
    await k.checkpoint('first');
    for (const t of tables) {
      await k.ensureModes([[t, 'upsert']]);
      await k.write(t, [{ op: 'insert', after: [1, t.key] }]);
    }
    log.length = 0;
    k.advance(at(200));
    const report = await k.checkpoint('ordered');
    expect(report.committed.map((x) => x.key).sort()).toEqual(tables.map((t) => t.key).sort());
    expect(log.indexOf(`start ${grand.key}`)).toBeGreaterThan(log.indexOf(`end ${great.key}`));
    expect(log.indexOf(`start ${child.key}`)).toBeGreaterThan(log.indexOf(`end ${grand.key}`));
    expect(log.indexOf(`start src.kc_other`)).toBeLessThan(log.indexOf(`end ${great.key}`)); // unrelated: at once
  });

  it('commits an empty stamped snapshot for an idle table every N checkpoints, or when asked (the old committer case, through the coordinator)', async () => {
    // The case of the old multi-table CheckpointCommitter (emptyCommitInterval: 3, gone in 46fa4ef),
    // driven through the real coordinator, which now owns that policy (options.idleCheckpoints: 3).
    const busy = await table('busy', { phase: 'streaming', offset: at(0) });
    const idle = await table('idle', { phase: 'streaming', offset: at(0) });
    const k = new Checkpointer(tablesOf(busy, idle), 1n, options, silentLogger, undefined);
    k.advance(at(0));

    // Unlike the old committer, the coordinator commits a table the job never committed to at the
    // first checkpoint (it records where the table starts: `needsCommit`, `!before`), so an idle table
    // created with no committed progress would read 'committed' at checkpoint 1 (and then commit at
    // 4: committed, no-changes, no-changes, committed, no-changes, no-changes). The old case's
    // idle table had nothing to say before its first idle commit; here it gets a committed starting
    // progress the real way — this first checkpoint — before the six checkpoints are counted.
    let report = await k.checkpoint('start');
    expect(report.committed.map((x) => x.key).sort()).toEqual([busy.key, idle.key]);
    expect(idle.committed).toEqual({ phase: 'streaming', offset: at(0) });

    await k.ensureModes([[busy, 'upsert']]);
    const statuses: string[] = [];
    const ids: bigint[] = [];
    for (let cp = 1; cp <= 6; cp++) {
      await k.write(busy, [{ op: 'insert', after: [cp, `r${cp}`] }]);
      k.advance(at(cp * 100));
      report = await k.checkpoint(`cp ${cp}`);
      ids.push(report.checkpointId);
      expect(report.committed.some((x) => x.key === busy.key)).toBe(true);
      statuses.push(report.committed.some((x) => x.key === idle.key) ? 'committed' : 'no-changes');
    }
    // the same sequence as the old committer's: from a committed start, the idle table's offset moves
    // every checkpoint, and it commits when checkpointsSinceCommit + 1 reaches idleCheckpoints (3)
    expect(statuses).toEqual(['no-changes', 'no-changes', 'committed', 'no-changes', 'no-changes', 'committed']);
    const first = ids[0]!;
    expect(ids).toEqual([0n, 1n, 2n, 3n, 4n, 5n].map((i) => first + i)); // busy commits each one
    expect(await stamp(idle)).toEqual({ checkpoint: first + 5n, progress: { phase: 'streaming', offset: at(600) } });

    // asked (a clean stop): both tables commit, busy with nothing buffered either
    k.advance(at(700));
    report = await k.checkpoint('stop', { flushIdle: true });
    expect(report.checkpointId).toBe(first + 6n);
    expect(report.committed.map((x) => x.key).sort()).toEqual([busy.key, idle.key]);
    const t = await loadCatalogTable(catalog, idle.identifier);
    const summary = currentSnapshot(t.metadata)!.summary;
    expect(summary).toMatchObject({ operation: 'append', 'floe.checkpoint-id': String(first + 6n), 'total-records': '0' });
    expect(summary['added-data-files']).toBeUndefined();
    expect((await stamp(idle))!.progress.offset).toEqual(at(700));
  });

  it('switching a writer mode commits what the other mode buffered first', async () => {
    const t = await table('modes', { phase: 'streaming', offset: at(10) });
    const k = new Checkpointer(tablesOf(t), 1n, options, silentLogger, undefined);
    k.advance(at(10));
    await k.ensureModes([[t, 'append-only']]);
    await k.write(t, [{ op: 'insert', after: [1, 'snap'] }]);
    await k.ensureModes([[t, 'upsert']]);
    expect(t.committer.bufferedChanges).toBe(0);
    expect((await stamp(t))!.checkpoint).toBe(1n);
    await k.write(t, [{ op: 'update', before: [1, 'snap'], after: [1, 'new'] }]);
    k.advance(at(20));
    await k.checkpoint('next');
    expect(await readTableRows(await loadCatalogTable(catalog, t.identifier))).toEqual([[1, 'new']]);
  });

  it('msUntilDue: nothing while no change is buffered; with changes, the time left of the interval (on the clock of the last checkpoint)', async () => {
    const { t, k, clock } = await streamingOnTestClock('due');
    expect(k.msUntilDue(), 'nothing buffered: no wait ends early').toBeUndefined();
    await k.ensureModes([[t, 'upsert']]);
    await k.write(t, [{ op: 'insert', after: [1, 'a'] }]);
    clock.now += 200;
    expect(k.msUntilDue()).toBe(300);
    clock.now += 400;
    expect(k.msUntilDue(), 'past the interval: due at once').toBe(0);
    expect(k.due()).toBe('interval');
    k.advance(at(20));
    await k.checkpoint('interval');
    expect(k.msUntilDue(), 'committed: nothing buffered').toBeUndefined();
    expect(await readTableRows(await loadCatalogTable(catalog, t.identifier))).toEqual([[1, 'a']]);
  });

  it('the interval counts from the start of the checkpoint before: a commit that took 300 ms of a 500 ms interval leaves 200 ms, one that took longer leaves none', async () => {
    const { t, k, clock } = await streamingOnTestClock('from_start');
    await k.ensureModes([[t, 'upsert']]);
    const commit = t.committer.commit.bind(t.committer);
    let commitMs = 300;
    vi.spyOn(t.committer, 'commit').mockImplementation(async (...args) => {
      clock.now += commitMs; // the commit's time, on the checkpointer's clock
      return commit(...args);
    });
    await k.write(t, [{ op: 'insert', after: [1, 'a'] }]);
    clock.now += 500;
    k.advance(at(20));
    await k.checkpoint('interval');
    await k.write(t, [{ op: 'insert', after: [2, 'b'] }]);
    expect(k.msUntilDue(), 'the interval less the commit').toBe(200);
    clock.now += 200;
    expect(k.due()).toBe('interval');
    commitMs = 700;
    k.advance(at(30));
    await k.checkpoint('interval');
    await k.write(t, [{ op: 'insert', after: [3, 'c'] }]);
    expect(k.msUntilDue(), 'a commit longer than the interval: the next is due at once').toBe(0);
    k.advance(at(40));
    await k.checkpoint('end');
    const rows = await readTableRows(await loadCatalogTable(catalog, t.identifier));
    expect(rows.sort((a, b) => (a[0] as number) - (b[0] as number))).toEqual([[1, 'a'], [2, 'b'], [3, 'c']]);
  });

  it('pieceMayStart: at once with no checkpoint committing; else once its commits have landed', async () => {
    const { t, k } = await streamingOnTestClock('in_flight');
    await k.ensureModes([[t, 'upsert']]);
    await k.pieceMayStart();
    await k.write(t, [{ op: 'insert', after: [1, 'a'] }]);
    k.advance(at(20));
    const checkpoint = k.checkpoint('interval');
    await k.pieceMayStart();
    expect(await readTableRows(await loadCatalogTable(catalog, t.identifier)), 'landed before the wait ended').toEqual([[1, 'a']]);
    await checkpoint;
  });

  it('pieceMayStart(pieceMs): a checkpoint due sooner than the piece would end goes first; one due later does not', async () => {
    const { t, k, clock } = await streamingOnTestClock('due_first');
    await k.ensureModes([[t, 'upsert']]);
    await k.write(t, [{ op: 'insert', after: [1, 'a'] }]);
    clock.now += 495; // the interval is 500 ms: due in 5
    let ended = false;
    const short = k.pieceMayStart(2).then(() => (ended = true));
    await short;
    expect(ended, 'a 2 ms piece ends before the checkpoint is due').toBe(true);
    expect(await readTableRows(await loadCatalogTable(catalog, t.identifier))).toEqual([]);

    const long = k.pieceMayStart(50);
    // the run loop's timer starts the checkpoint once due, while the piece waits
    await new Promise((resolve) => setTimeout(resolve, 2));
    k.advance(at(20));
    clock.now += 5;
    const checkpoint = k.checkpoint('interval');
    await long;
    expect(await readTableRows(await loadCatalogTable(catalog, t.identifier)), 'landed before the 50 ms piece went on').toEqual([[1, 'a']]);
    await checkpoint;
  });

  it('whenCaughtUp: after an interval of binlog changes without a quiet spell, the wait for the next event is the quiet spell, and its end is a checkpoint "caught up"', async () => {
    const { t, k, clock } = await streamingOnTestClock('caughtup');
    await k.ensureModes([[t, 'upsert']]);
    // a trickle: every change after a wait of a quiet spell or more starts a new stretch
    for (let i = 1; i <= 6; i++) {
      clock.now += 100;
      k.sourceEvent('binlog', CAUGHT_UP_QUIET_MS + 5);
      await k.write(t, [{ op: 'insert', after: [i, 'trickle'] }]);
    }
    expect(k.msUntilDue(), 'a trickle: the interval as ever').toBe(0);
    expect(k.dueAfterSilence(10)).toBe('interval, no event since');
    k.advance(at(20));
    await k.checkpoint('interval');
    // a backlog: changes back to back for 600 ms (> the interval)
    for (let i = 0; i < 60; i++) {
      clock.now += 10;
      k.sourceEvent('binlog', 0);
      await k.write(t, [{ op: 'insert', after: [100 + i, 'backlog'] }]);
    }
    k.advance(at(30));
    await k.checkpoint('interval');
    clock.now += 5;
    k.sourceEvent('binlog', 0);
    await k.write(t, [{ op: 'insert', after: [200, 'tail'] }]);
    expect(k.msUntilDue(), 'the backlog went on for an interval: a quiet spell is waited for, not the interval').toBe(CAUGHT_UP_QUIET_MS);
    clock.now += CAUGHT_UP_QUIET_MS;
    expect(k.dueAfterSilence(CAUGHT_UP_QUIET_MS)).toMatch(/^caught up \(no event for 25 ms after 0\.6 s of changes\)$/);
    k.advance(at(40));
    await k.checkpoint('caught up');
    clock.now += 5;
    k.sourceEvent('binlog', 0);
    await k.write(t, [{ op: 'insert', after: [201, 'after'] }]);
    expect(k.msUntilDue(), 'the quiet spell ended the stretch: the interval again').toBe(495);

    // a snapshot's events never make a stretch; and the option turns it off
    for (let i = 0; i < 60; i++) {
      clock.now += 10;
      k.sourceEvent(i % 2 === 0 ? 'binlog' : 'snapshot', 0);
    }
    expect(k.msUntilDue(), 'snapshot events in between: no stretch of an interval').toBe(0);
    await k.checkpoint('end');
    const ids = (await readTableRows(await loadCatalogTable(catalog, t.identifier))).map((r) => r[0] as number).sort((a, b) => a - b);
    expect(ids).toEqual([1, 2, 3, 4, 5, 6, ...Array.from({ length: 60 }, (_, i) => 100 + i), 200, 201]);

    const t2 = await table('caughtup_off', { phase: 'streaming', offset: at(10) });
    const off = new Checkpointer(tablesOf(t2), 1n, { ...options, intervalMs: 500, whenCaughtUp: false }, silentLogger, undefined, () => clock.now);
    await off.ensureModes([[t2, 'upsert']]);
    off.advance(at(10));
    await off.checkpoint('start');
    for (let i = 0; i < 60; i++) {
      clock.now += 10;
      off.sourceEvent('binlog', 0);
    }
    await off.write(t2, [{ op: 'insert', after: [300, 'off'] }]);
    expect(off.msUntilDue(), 'whenCaughtUp false: the interval only').toBe(0);
    clock.now -= 200;
    expect(off.msUntilDue(), 'whenCaughtUp false: the time left of the interval, never the quiet spell').toBe(100);
  });

  it('whenCaughtUp: what a run that starts streaming begins with is no snapshot event (it would end the start backlog before its first change)', () => {
    const phase = (p: object): SourceEvent => ({ kind: 'phase', ...p }) as SourceEvent;
    expect(cadenceEventOf(phase({ phase: 'streaming' })), 'a run that starts streaming: neither').toBeUndefined();
    expect(cadenceEventOf({ kind: 'snapshot-plan', chunks: [] } as unknown as SourceEvent), 'the plan of a table with no chunks left: neither').toBeUndefined();
    expect(cadenceEventOf({ kind: 'snapshot-plan', chunks: [{ id: 't#0', range: '{}' }] } as unknown as SourceEvent)).toBe('snapshot');
    expect(cadenceEventOf(phase({ phase: 'handover', offset: at(5) }))).toBe('snapshot');
    expect(cadenceEventOf(phase({ phase: 'streaming', offset: at(9) })), 'streaming after a hand-over').toBe('snapshot');
    expect(cadenceEventOf({ kind: 'transaction' } as SourceEvent)).toBe('binlog');
    expect(cadenceEventOf({ kind: 'progress', chunksTotal: 4 } as SourceEvent)).toBe('snapshot');
    expect(cadenceEventOf({ kind: 'progress' } as SourceEvent), 'a binlog progress mark').toBe('binlog');
  });

  it('whenCaughtUp: the stretch a run starts streaming with is a backlog however short; a snapshot event or a quiet spell ends that', async () => {
    const { t, k, clock } = await streamingOnTestClock('caughtup_start');
    await k.ensureModes([[t, 'upsert']]);
    // a restart's backlog, read in 100 ms (a fifth of the interval), its first change after the
    // source's start (connecting and finding the offset: 300 ms without an event)
    for (let i = 0; i < 10; i++) {
      clock.now += i === 0 ? 300 : 10;
      k.sourceEvent('binlog', i === 0 ? 300 : 0);
      await k.write(t, [{ op: 'insert', after: [i, 'backlog'] }]);
    }
    expect(k.msUntilDue(), 'the start: the quiet spell, not the 110 ms left of the interval').toBe(CAUGHT_UP_QUIET_MS);
    // the runner's timer fired after 60 ms, which the thread spent busy (a key index loading beside
    // the stream), idle 3 ms of them: no checkpoint, and the next event goes on with the backlog
    clock.now += 60;
    expect(k.dueAfterSilence(3), 'a busy wait is not the end of the backlog').toBeUndefined();
    k.sourceEvent('binlog', 3);
    await k.write(t, [{ op: 'insert', after: [10, 'backlog'] }]);
    expect(k.msUntilDue(), 'still the start backlog').toBe(CAUGHT_UP_QUIET_MS);
    clock.now += CAUGHT_UP_QUIET_MS;
    expect(k.dueAfterSilence(CAUGHT_UP_QUIET_MS)).toMatch(/^caught up \(no event for 25 ms after 0\.2 s of changes\)$/);
    k.advance(at(20));
    await k.checkpoint('caught up');
    expect((await readTableRows(await loadCatalogTable(catalog, t.identifier))).length).toBe(11);
    // after it, a short stretch waits for the interval as ever
    for (let i = 0; i < 10; i++) {
      clock.now += 10;
      k.sourceEvent('binlog', 0);
      await k.write(t, [{ op: 'insert', after: [100 + i, 'later'] }]);
    }
    expect(k.msUntilDue(), 'after the start: the interval').toBe(500 - 100);
    await k.checkpoint('end');

    // a run that starts with its snapshot: the hand-over's binlog changes are no restart's backlog
    const snap = await streamingOnTestClock('caughtup_snapshot_start');
    await snap.k.ensureModes([[snap.t, 'upsert']]);
    snap.k.sourceEvent('snapshot', 0);
    for (let i = 0; i < 10; i++) {
      snap.clock.now += 10;
      snap.k.sourceEvent('binlog', 0);
      await snap.k.write(snap.t, [{ op: 'insert', after: [i, 'handover'] }]);
    }
    expect(snap.k.msUntilDue(), 'after a snapshot event: the interval').toBe(500 - 100);
    await snap.k.checkpoint('end');
  });

  it('once the snapshot part is dropped, every state object left in the table\'s state directory goes (a killed run\'s leftovers too)', async () => {
    const chunk = { table: { database: 'src', table: 'stray' }, index: 0, keyColumns: [] };
    const snapshot = { chunks: [serializeChunk(chunk)], finished: new Map([[chunkId(chunk), serializeOffset(at(50))]]), rows: 0 };
    const t = await table('stray', { phase: 'snapshot', snapshot });
    const k = new Checkpointer(tablesOf(t), 1n, options, silentLogger, undefined);
    await k.checkpoint('snapshot done');
    const stateDir = join(fileURLToPath(t.location), '.floe', 'state');
    expect((await readdir(stateDir)).length, 'the plan and the progress object').toBe(2);
    // what a run killed between an object's write and its commit leaves behind
    await writeFile(join(stateDir, '00000000000000000002-dead.json'), '{}');
    await writeFile(join(stateDir, '.00000000000000000003-dead.json.1234.floe-tmp'), '{');
    t.working = { ...t.working!, phase: 'streaming' };
    k.advance(at(40));
    await k.checkpoint('hand-over');
    expect((await readdir(stateDir)).length, 'still before the chunk\'s high watermark: the snapshot part stays').toBe(4);
    k.advance(at(60));
    await k.checkpoint('past it', { flushIdle: true });
    expect((await stamp(t))!.progress).toEqual({ phase: 'streaming', offset: at(60) });
    expect(await readdir(stateDir)).toEqual([]);
  });

  it('a checkpoint is due when the buffered changes opened maxOpenFiles data files, and after the first snapshot chunk of a run', async () => {
    const identifier: TableIdentifier = { namespace: ['db'], name: 'fanout' };
    const schema = new Schema(0, [{ id: 1, name: 'id', required: true, type: Types.int }, { id: 2, name: 'v', required: false, type: Types.string }], [1]);
    const created = await createTable(catalog, identifier, { schema, formatVersion: 3, partitionSpec: parsePartitionSpec(['identity(id)'], schema) });
    const t: CheckpointTable = { ...(await table('fanout_unused', undefined)), key: 'src.fanout', identifier, io: created.io, location: created.metadata.location, committer: new TableCommitter({ catalog, identifier, jobId: JOB }) };
    t.working = { phase: 'streaming', offset: at(1) };
    const k = new Checkpointer(tablesOf(t), 1n, { ...options, maxBufferedChanges: 100, maxOpenFiles: 3 }, silentLogger, undefined);
    k.advance(at(1));
    await k.ensureModes([[t, 'upsert']]);
    // two rows in one partition, one in another: two files
    await k.write(t, [{ op: 'insert', after: [1, 'a'] }, { op: 'insert', after: [1, 'b'] }, { op: 'insert', after: [2, 'c'] }]);
    expect(k.due()).toBeUndefined();
    await k.write(t, [{ op: 'insert', after: [3, 'd'] }]);
    expect(k.due()).toBe('3 data files open');
    await k.checkpoint('files');
    expect(k.due()).toBeUndefined();
    expect((await readTableRows(await loadCatalogTable(catalog, identifier))).map((r) => r[0]).sort()).toEqual([1, 2, 3]);

    // the first chunk of the run is committed at once; later ones wait for the interval
    await k.write(t, [{ op: 'insert', after: [4, 'e'] }]);
    k.chunkWritten();
    expect(k.due()).toBe('the first chunks of the run');
    await k.checkpoint('first chunk');
    await k.write(t, [{ op: 'insert', after: [5, 'f'] }]);
    k.chunkWritten();
    expect(k.due()).toBeUndefined();
  });

  it('a schema change commits with the table\'s offset through the DDL, in one snapshot', async () => {
    const t = await table('altered', { phase: 'streaming', offset: at(100) }, at(150));
    const k = new Checkpointer(tablesOf(t), 3n, options, silentLogger, undefined);
    k.advance(at(200));
    await k.ensureModes([[t, 'upsert']]);
    await k.write(t, [{ op: 'insert', after: [1, 'x'] }]);
    const change = { changes: [{ kind: 'add-column' as const, name: 'n', type: Types.int }], properties: { 'floe.source-schema': 'after' } };
    await expect(k.commitSchemaChange(t.key, at(250), { schema: change })).rejects.toThrow(/expected its rows before the DDL committed, found 1 buffered/);
    await k.checkpoint('before the DDL');
    const report = await k.commitSchemaChange(t.key, at(250), { schema: change });
    expect(report.checkpointId).toBe(4n);
    expect(await stamp(t)).toEqual({ checkpoint: 4n, progress: { phase: 'streaming', offset: at(250) } });
    const m = (await loadCatalogTable(catalog, t.identifier)).metadata;
    expect(m.schemas.find((x) => x.schemaId === m.currentSchemaId)!.fields.map((f) => f.name)).toEqual(['id', 'v', 'n']);
    expect(currentSnapshot(m)!.schemaId).toBe(m.currentSchemaId);
    expect(m.properties['floe.source-schema']).toBe('after');
    expect(t.skipUntil).toBeUndefined();
    expect(t.committed).toEqual({ phase: 'streaming', offset: at(250) });
  });

  it('refuses a checkpoint id the table already holds from this job (another process)', async () => {
    const t = await table('twice', { phase: 'streaming', offset: at(10) });
    const other = new TableCommitter({ identifier: t.identifier, catalog, jobId: JOB });
    await other.open();
    await other.commit(5n, '{"v":1,"phase":"streaming","offset":{"file":"binlog.000001","pos":99,"serverId":1}}');
    const k = new Checkpointer(tablesOf(t), 5n, options, silentLogger, undefined);
    k.advance(at(10));
    await expect(k.checkpoint('clash')).rejects.toThrow(/already holds checkpoint 5 of this job.*another floe process/);
  });
});
