/**
 * Per-table progress, persisted in the lake itself (docs/design.md §2, §4: "the lake is the source of truth —
 * no local state"). Every checkpoint commit stamps the table's snapshot summary with
 * `floe.source-offset` = this module's JSON, and a restart reads it back (with `lastCommitted`) to
 * rebuild the source's resume point, on any machine.
 *
 * `floe.source-offset` (kept small: it is copied into every snapshot summary):
 *
 *   {"v":1,"phase":"snapshot","snapshot":{"state":"<uri>","chunks":120,"finished":57,"rows":45210}}
 *   {"v":1,"phase":"streaming","offset":{<serializeOffset form>},"snapshot":{…}}
 *   {"v":1,"phase":"streaming","offset":{<serializeOffset form>}}
 *
 * - `phase`: `snapshot` while the table's chunks are being copied; `streaming` from the hand-over on.
 * - `offset` (streaming): the binlog offset up to which the table is complete — every transaction at
 *   or before it is in the table, none after it. Resume reads from there and skips the table's
 *   transactions at or before it.
 * - `snapshot`: the chunk plan and the finished chunks with their high watermarks, kept from the first
 *   chunk until the table's offset has passed the highest high watermark (until then the hand-over
 *   filter needs them after a restart); counts for people and `floe status`. The big part lives in
 *   immutable objects beside the table's data, written BEFORE the commit that references them and
 *   never overwritten (a commit that does not land leaves an unreferenced object, nothing else):
 *     <table location>/.floe/state/plan-<uuid>.json             {"v":1,"table":"db.t","chunks":["<serialized chunk>",…]}
 *     <table location>/.floe/state/<checkpoint id>-<uuid>.json  {"v":1,"table":"db.t","plan":"<uri>","finished":{"db.t#3":{<offset>},…},"rows":45210}
 *   The plan is written once per table snapshot; a progress object per checkpoint that finished chunks.
 *   They live in the hidden `<table location>/.floe/state/` (`stateDirectory`: another engine's
 *   orphan-file removal skips it), and are deleted once a commit that no longer needs them landed;
 *   the whole directory once the snapshot part is dropped (`strayStateObjects`: also the objects of
 *   commits that never landed).
 */
import type { FileIO } from '../io/file-io.js';
import { chunkId, parseChunk } from '../source/mysql/index.js';
import { compareOffsets, maxOffset, parseOffset, serializeOffset, type BinlogOffset } from '../source/mysql/index.js';
import { errorMessage, FloeError } from '../util/errors.js';
import { parseJson, stringifyJson } from '../util/json.js';

const SUBSYSTEM = 'pipeline.state';
const STATE_VERSION = 1;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

type TablePhase = 'snapshot' | 'streaming';

export interface SnapshotProgress {
  /** Serialized chunks (`serializeChunk`) in plan order, as the source's `snapshot-plan` gave them. */
  readonly chunks: readonly string[];
  /** Chunk id → serialized high watermark of every chunk whose rows are in the table. */
  readonly finished: ReadonlyMap<string, string>;
  /** Snapshot rows written to the table so far. */
  readonly rows: number;
  /** Where the plan object is, once written. */
  readonly planLocation?: string;
  /** Where an object holding exactly this progress is, once written (cleared by every change). */
  readonly stateLocation?: string;
}

export interface TableProgress {
  readonly phase: TablePhase;
  readonly offset?: BinlogOffset;
  readonly snapshot?: SnapshotProgress;
}

/** Whether every chunk of the plan is finished. */
export function snapshotComplete(s: SnapshotProgress): boolean {
  return s.finished.size >= s.chunks.length;
}

/** The highest high watermark of a complete snapshot (undefined when no chunk is finished). */
function highestWatermark(s: SnapshotProgress): BinlogOffset | undefined {
  const all = [...s.finished.values()].map(parseOffset);
  return all.length ? maxOffset(all) : undefined;
}

/**
 * Drops the snapshot part once the table's offset has passed every chunk's high watermark: from there
 * on no transaction can be already contained in a chunk, and the plan is no longer needed to resume.
 */
export function settleProgress(p: TableProgress): TableProgress {
  if (p.phase !== 'streaming' || !p.snapshot || !p.offset || !snapshotComplete(p.snapshot)) return p;
  const highest = highestWatermark(p.snapshot);
  if (highest && compareOffsets(p.offset, highest) < 0) return p;
  return { phase: 'streaming', offset: p.offset };
}

/**
 * `<table>/.floe/state`: a hidden directory, so that orphan-file removal by another engine leaves it
 * alone — Java's `DeleteOrphanFiles` (Spark `remove_orphan_files`) skips paths whose name starts with
 * `.` or `_` (`HiddenPathFilter`), and Trino's removes orphans under `data/` and `metadata/` only.
 * floe removes the objects itself once no commit it may resume from refers to them
 * (`obsoleteStateObjects`). Tables written by earlier versions keep their `floe/state` objects.
 */
function stateDirectory(tableLocation: string): string {
  return `${tableLocation.replace(/\/+$/, '')}/.floe/state`;
}

/**
 * The state objects `before` referred to that `after` — now committed in place of `before` — no
 * longer needs: the previous progress object when a newer one replaced it, and the plan too once the
 * snapshot part is dropped (`settleProgress`). Only objects in a state directory are named.
 */
export function obsoleteStateObjects(before: TableProgress | undefined, after: TableProgress): string[] {
  const was = before?.snapshot;
  if (!was) return [];
  const now = after.snapshot;
  const out: string[] = [];
  if (was.stateLocation && was.stateLocation !== now?.stateLocation) out.push(was.stateLocation);
  if (was.planLocation && was.planLocation !== now?.planLocation) out.push(was.planLocation);
  return out.filter((p) => /\/\.?floe\/state\/[^/]+\.json$/.test(p));
}

/**
 * Once a table's committed progress has no snapshot part any more (`settleProgress` dropped it),
 * nothing it may resume from refers to a state object: every object in its state directory is
 * stray — those `obsoleteStateObjects` names, and those of commits that never landed (a kill between
 * an object's write and its commit leaves one behind, or the temporary file of its write; the
 * directory is hidden, so no engine's orphan removal takes them).
 */
export async function strayStateObjects(io: FileIO, tableLocation: string): Promise<string[]> {
  // every object: a killed create-if-absent leaves its temporary file too (local-file-io.ts)
  return io.list(`${stateDirectory(tableLocation)}/`);
}

function checkpointText(id: bigint): string {
  return id.toString().padStart(20, '0');
}

function offsetJson(o: BinlogOffset): unknown {
  return parseJson(serializeOffset(o));
}

async function writeObject(io: FileIO, path: string, value: unknown): Promise<void> {
  // Fresh uuid names: create-if-absent makes "never overwritten" a property of the store, not a hope.
  const created = await io.writeIfAbsent(path, encoder.encode(stringifyJson(value)));
  if (!created) throw new FloeError(SUBSYSTEM, 'already-exists', `state object ${path} already exists; state objects are immutable and named by fresh UUIDs`);
}

export interface EncodeContext {
  readonly io: FileIO;
  /** The table's base location. */
  readonly tableLocation: string;
  /** 'db.table' of the source table (recorded in the objects, checked when read back). */
  readonly sourceKey: string;
  readonly checkpointId: bigint;
}

/**
 * The `floe.source-offset` text for a table's progress, writing the plan / progress objects it refers
 * to first when they are not in the warehouse yet. Returns the progress with their locations set.
 */
export async function encodeTableProgress(p: TableProgress, ctx: EncodeContext): Promise<{ summary: string; progress: TableProgress }> {
  let snapshot = p.snapshot;
  if (snapshot && !snapshot.stateLocation) {
    const dir = stateDirectory(ctx.tableLocation);
    let planLocation = snapshot.planLocation;
    if (!planLocation) {
      planLocation = `${dir}/plan-${globalThis.crypto.randomUUID()}.json`;
      await writeObject(ctx.io, planLocation, { v: STATE_VERSION, table: ctx.sourceKey, chunks: snapshot.chunks });
    }
    const stateLocation = `${dir}/${checkpointText(ctx.checkpointId)}-${globalThis.crypto.randomUUID()}.json`;
    const finished: Record<string, unknown> = {};
    for (const [id, hw] of snapshot.finished) finished[id] = parseJson(hw);
    await writeObject(ctx.io, stateLocation, { v: STATE_VERSION, table: ctx.sourceKey, plan: planLocation, finished, rows: snapshot.rows });
    snapshot = { ...snapshot, planLocation, stateLocation };
  }
  const doc: Record<string, unknown> = { v: STATE_VERSION, phase: p.phase };
  if (p.offset) doc.offset = offsetJson(p.offset);
  if (snapshot) doc.snapshot = { state: snapshot.stateLocation, chunks: snapshot.chunks.length, finished: snapshot.finished.size, rows: snapshot.rows };
  return { summary: stringifyJson(doc), progress: { ...p, snapshot } };
}

function invalid(what: string, why: string): FloeError {
  return new FloeError(
    SUBSYSTEM,
    'invalid-data',
    `${what}: ${why}. It was not written by this version of floe, or was edited; to start the table over, drop its Iceberg table (floe creates and snapshots it again)`,
  );
}

async function readObject(io: FileIO, path: string, what: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = decoder.decode(await io.read(path));
  } catch (e) {
    throw new FloeError(
      SUBSYSTEM,
      'not-found',
      `${what}: cannot read the snapshot state object ${path} the table's last checkpoint refers to (${errorMessage(e)}); if orphan-file removal deleted it, drop the Iceberg table to snapshot it again`,
      { cause: e },
    );
  }
  const doc = parseJson(text) as unknown;
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw invalid(`${what}: ${path}`, 'not a JSON object');
  return doc as Record<string, unknown>;
}

function readOffsetValue(value: unknown, what: string): BinlogOffset {
  if (!value || typeof value !== 'object') throw invalid(what, `expected a binlog offset object, found ${JSON.stringify(value)}`);
  return parseOffset(stringifyJson(value));
}

/** What a `floe.source-offset` value says by itself: no state object is read. */
export interface ProgressSummary {
  phase: TablePhase;
  /** Streaming: every transaction up to here is in the table. */
  offset?: BinlogOffset;
  /** The inline counts of the snapshot (for `floe status` and the demo's report). */
  snapshot?: { chunks: number; finished: number; rows: number };
}

/**
 * Reads the phase, offset and chunk counts of a `floe.source-offset` value without touching the
 * objects it refers to (the counts are inline for exactly this: `floe status`, the demo). A bare
 * serialized binlog offset — the form before `{"v":1,…}` — reads as a streaming table at that offset.
 * The one reader of the form besides `decodeTableProgress`, so that the format has one owner.
 */
export function parseProgressSummary(text: string): ProgressSummary {
  const doc = parseJson(text) as Record<string, unknown> | null;
  const unexpected = () => invalid(`floe.source-offset ${JSON.stringify(text.slice(0, 200))}`, `expected floe's progress form {"v":${STATE_VERSION},"phase":…}`);
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw unexpected();
  if (doc.v === undefined) return { phase: 'streaming', offset: parseOffset(text) };
  if (doc.v !== STATE_VERSION || (doc.phase !== 'snapshot' && doc.phase !== 'streaming')) throw unexpected();
  const out: ProgressSummary = { phase: doc.phase };
  if (doc.offset !== undefined) out.offset = readOffsetValue(doc.offset, 'floe.source-offset offset');
  const snap = doc.snapshot as Record<string, unknown> | undefined;
  if (snap && typeof snap === 'object') out.snapshot = { chunks: Number(snap.chunks ?? 0), finished: Number(snap.finished ?? 0), rows: Number(snap.rows ?? 0) };
  return out;
}

/**
 * Reads a table's progress back from its `floe.source-offset` (and the objects it refers to).
 * `what` names the table in messages; `sourceKey` is checked against the objects.
 */
export async function decodeTableProgress(summary: string, io: FileIO, sourceKey: string, what: string): Promise<TableProgress> {
  let doc: Record<string, unknown>;
  try {
    doc = parseJson(summary) as Record<string, unknown>;
  } catch (e) {
    throw invalid(`${what}: floe.source-offset`, `not JSON (${errorMessage(e)})`);
  }
  if (!doc || typeof doc !== 'object' || doc.v !== STATE_VERSION) throw invalid(`${what}: floe.source-offset ${summary.slice(0, 200)}`, `expected {"v":${STATE_VERSION},…}`);
  const phase = doc.phase;
  if (phase !== 'snapshot' && phase !== 'streaming') throw invalid(`${what}: floe.source-offset`, `phase must be "snapshot" or "streaming", found ${JSON.stringify(phase)}`);
  const offset = doc.offset === undefined ? undefined : readOffsetValue(doc.offset, `${what}: floe.source-offset offset`);
  if (phase === 'streaming' && !offset) throw invalid(`${what}: floe.source-offset`, 'a streaming table must carry an offset');
  let snapshot: SnapshotProgress | undefined;
  if (doc.snapshot !== undefined) {
    const ref = doc.snapshot as Record<string, unknown>;
    if (!ref || typeof ref.state !== 'string') throw invalid(`${what}: floe.source-offset snapshot`, 'expected {"state": "<uri>", …}');
    snapshot = await readSnapshotProgress(io, ref.state, sourceKey, what);
  }
  return { phase, ...(offset ? { offset } : {}), ...(snapshot ? { snapshot } : {}) };
}

async function readSnapshotProgress(io: FileIO, stateLocation: string, sourceKey: string, what: string): Promise<SnapshotProgress> {
  const state = await readObject(io, stateLocation, what);
  if (state.v !== STATE_VERSION || state.table !== sourceKey || typeof state.plan !== 'string' || typeof state.finished !== 'object' || typeof state.rows !== 'number') {
    throw invalid(`${what}: ${stateLocation}`, `expected {"v":${STATE_VERSION},"table":"${sourceKey}","plan":…,"finished":{…},"rows":n}`);
  }
  const plan = await readObject(io, state.plan, what);
  if (plan.v !== STATE_VERSION || plan.table !== sourceKey || !Array.isArray(plan.chunks) || !plan.chunks.every((c) => typeof c === 'string')) {
    throw invalid(`${what}: ${state.plan}`, `expected {"v":${STATE_VERSION},"table":"${sourceKey}","chunks":["…"]}`);
  }
  const chunks = plan.chunks as string[];
  const ids = new Set(chunks.map((c) => chunkId(parseChunk(c))));
  const finished = new Map<string, string>();
  for (const [id, hw] of Object.entries(state.finished as Record<string, unknown>)) {
    if (!ids.has(id)) throw invalid(`${what}: ${stateLocation}`, `finished chunk ${id} is not in the plan`);
    finished.set(id, serializeOffset(readOffsetValue(hw, `${what}: high watermark of ${id}`)));
  }
  return { chunks, finished, rows: state.rows, planLocation: state.plan, stateLocation };
}
