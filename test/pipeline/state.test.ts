/**
 * Persisted per-table progress: the `floe.source-offset` JSON and the immutable state objects it
 * refers to round-trip; the summary stays small however many chunks; objects are never overwritten;
 * the snapshot part is dropped once the offset passes every high watermark; malformed state is
 * refused with a message that says what to do. And the resume plan built from mixed tables.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalFileIO } from '../../src/io/local-file-io.js';
import { chunkId, serializeChunk, type Chunk } from '../../src/source/mysql/snapshot/chunk.js';
import { mariadbGtids, serializeOffset, type BinlogOffset } from '../../src/source/mysql/offset/offset.js';
import { decodeTableProgress, encodeTableProgress, obsoleteStateObjects, settleProgress, snapshotComplete, type TableProgress } from '../../src/pipeline/state.js';
import { planResume } from '../../src/pipeline/resume-plan.js';

const io = new LocalFileIO();
let dir: string;
let location: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floe-state-'));
  location = pathToFileURL(join(dir, 'db', 't')).href;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const at = (pos: number, seq: number): BinlogOffset => ({ file: 'binlog.000002', position: pos, gtids: mariadbGtids(`0-1-${seq}`), serverId: 1 });

function plan(n: number): string[] {
  return Array.from({ length: n }, (_, i): Chunk => ({
    table: { database: 'db', table: 't' },
    index: i,
    keyColumns: ['id'],
    ...(i > 0 ? { lower: [BigInt(i * 1000)] } : {}),
    ...(i < n - 1 ? { upper: [BigInt((i + 1) * 1000)] } : {}),
  })).map(serializeChunk);
}

describe('table progress', () => {
  it('round-trips a snapshot in progress through a small summary and immutable objects', async () => {
    const chunks = plan(2000);
    const finished = new Map<string, string>();
    for (let i = 0; i < 1500; i++) finished.set(`db.t#${i}`, serializeOffset(at(1000 + i, 10 + i)));
    const p: TableProgress = { phase: 'snapshot', snapshot: { chunks, finished, rows: 12_345_678 } };
    const { summary, progress } = await encodeTableProgress(p, { io, tableLocation: location, sourceKey: 'db.t', checkpointId: 7n });
    expect(summary.length).toBeLessThan(400);
    expect(JSON.parse(summary)).toMatchObject({ v: 1, phase: 'snapshot', snapshot: { chunks: 2000, finished: 1500, rows: 12_345_678 } });
    expect(progress.snapshot!.stateLocation).toMatch(/\/db\/t\/\.floe\/state\/00000000000000000007-[0-9a-f-]{36}\.json$/);
    const back = await decodeTableProgress(summary, io, 'db.t', 'table db.t');
    expect(back.phase).toBe('snapshot');
    expect(back.snapshot!.chunks).toEqual(chunks);
    expect([...back.snapshot!.finished]).toEqual([...finished]);
    expect(back.snapshot!.rows).toBe(12_345_678);

    // The next checkpoint writes a new progress object and reuses the plan object.
    const more = new Map(finished).set('db.t#1500', serializeOffset(at(9000, 9000)));
    const next = await encodeTableProgress({ phase: 'snapshot', snapshot: { ...back.snapshot!, finished: more, stateLocation: undefined } }, { io, tableLocation: location, sourceKey: 'db.t', checkpointId: 8n });
    expect(next.progress.snapshot!.planLocation).toBe(back.snapshot!.planLocation);
    expect(next.progress.snapshot!.stateLocation).not.toBe(back.snapshot!.stateLocation);
    const files = await readdir(join(dir, 'db', 't', '.floe', 'state'));
    expect(files.filter((f) => f.startsWith('plan-'))).toHaveLength(1);
    expect(files).toHaveLength(3);
    // An unchanged progress (locations set) is not written again.
    const same = await encodeTableProgress(next.progress, { io, tableLocation: location, sourceKey: 'db.t', checkpointId: 9n });
    expect(same.summary).toBe(next.summary);
    expect(await readdir(join(dir, 'db', 't', '.floe', 'state'))).toHaveLength(3);
  });

  it('a streaming table records its offset; the snapshot part goes once the offset passes every high watermark', async () => {
    const chunks = plan(3);
    const finished = new Map(chunks.map((c, i) => [`db.t#${i}`, serializeOffset(at(100 * (i + 1), i + 1))]));
    const kept = settleProgress({ phase: 'streaming', offset: at(250, 2), snapshot: { chunks, finished, rows: 3 } });
    expect(kept.snapshot).toBeDefined();
    const settled = settleProgress({ phase: 'streaming', offset: at(300, 3), snapshot: { chunks, finished, rows: 3 } });
    expect(settled).toEqual({ phase: 'streaming', offset: at(300, 3) });
    const { summary } = await encodeTableProgress(settled, { io, tableLocation: location, sourceKey: 'db.t', checkpointId: 10n });
    expect(JSON.parse(summary)).toEqual({ v: 1, phase: 'streaming', offset: { file: 'binlog.000002', pos: 300, flavor: 'mariadb', gtids: '0-1-3', serverId: 1 } });
    expect(await decodeTableProgress(summary, io, 'db.t', 't')).toEqual(settled);
  });

  it('refuses state it did not write, naming what to do', async () => {
    await expect(decodeTableProgress('{"checkpoint":3}', io, 'db.t', 'table lake.t')).rejects.toThrow(/table lake\.t.*drop its Iceberg table/);
    await expect(decodeTableProgress('{"v":1,"phase":"streaming"}', io, 'db.t', 'table lake.t')).rejects.toThrow(/must carry an offset/);
    await expect(decodeTableProgress(`{"v":1,"phase":"snapshot","snapshot":{"state":"${location}/floe/state/missing.json"}}`, io, 'db.t', 'table lake.t')).rejects.toThrow(/cannot read the snapshot state object/);
    const { summary } = await encodeTableProgress({ phase: 'snapshot', snapshot: { chunks: plan(1), finished: new Map(), rows: 0 } }, { io, tableLocation: location, sourceKey: 'db.t', checkpointId: 11n });
    await expect(decodeTableProgress(summary, io, 'db.other', 'table lake.t')).rejects.toThrow(/"table":"db.other"/);
  });
});

describe('resume plan', () => {
  it('reads the binlog from the lowest point any table needs; each streaming table skips what it holds', () => {
    const chunks = plan(2);
    const ids = chunks.map((_, i) => `db.t#${i}`);
    const snapshotting: TableProgress = { phase: 'snapshot', snapshot: { chunks, finished: new Map([[ids[0], serializeOffset(at(500, 5))]]), rows: 10 } };
    const streaming: TableProgress = { phase: 'streaming', offset: at(900, 9) };
    const handedOver: TableProgress = { phase: 'streaming', offset: at(700, 7), snapshot: { chunks, finished: new Map(ids.map((id) => [id.replace('db.t', 'db.h'), serializeOffset(at(650, 6))])), rows: 2 } };
    const { resume, skipUntil } = planResume([
      { key: 'db.t', progress: snapshotting },
      { key: 'db.s', progress: streaming },
      { key: 'db.h', progress: handedOver },
      { key: 'db.new' },
      { key: 'db.late', streamFrom: at(1200, 12) },
    ]);
    expect(resume.offset).toEqual(at(500, 5));
    expect(resume.plans).toEqual({ 'db.t': chunks, 'db.s': [], 'db.h': chunks, 'db.late': [] });
    expect(resume.plans!['db.new']).toBeUndefined(); // the source splits and snapshots it
    expect(Object.keys(resume.finished!).sort()).toEqual(['db.h#0', 'db.h#1', 'db.t#0']);
    expect([...skipUntil]).toEqual([
      ['db.s', at(900, 9)],
      ['db.h', at(700, 7)],
      ['db.late', at(1200, 12)],
    ]);
    expect(snapshotComplete(handedOver.snapshot!)).toBe(true);
    expect(chunkId({ table: { database: 'db', table: 't' }, index: 1, keyColumns: [] })).toBe(ids[1]);
  });

  it('leaves the start to the source when no table committed anything', () => {
    expect(planResume([{ key: 'db.a' }, { key: 'db.b' }]).resume).toEqual({ plans: {}, finished: {} });
  });

  it('names the state objects a newer committed progress no longer needs', () => {
    const dir = 'file:///w/db/t/.floe/state';
    const snap = (state: string) => ({ chunks: ['a'], finished: new Map(), rows: 0, planLocation: `${dir}/plan-1.json`, stateLocation: `${dir}/${state}.json` });
    expect(obsoleteStateObjects(undefined, { phase: 'snapshot', snapshot: snap('2') })).toEqual([]);
    expect(obsoleteStateObjects({ phase: 'snapshot', snapshot: snap('1') }, { phase: 'snapshot', snapshot: snap('2') })).toEqual([`${dir}/1.json`]);
    expect(obsoleteStateObjects({ phase: 'snapshot', snapshot: snap('2') }, { phase: 'snapshot', snapshot: snap('2') })).toEqual([]);
    expect(obsoleteStateObjects({ phase: 'streaming', snapshot: snap('2') }, { phase: 'streaming' })).toEqual([`${dir}/2.json`, `${dir}/plan-1.json`]);
    // an object outside a state directory is never named
    expect(obsoleteStateObjects({ phase: 'streaming', snapshot: { ...snap('2'), stateLocation: 'file:///w/db/t/data/x.parquet' } }, { phase: 'streaming' })).toEqual([`${dir}/plan-1.json`]);
  });
});
