/**
 * The phases of one source stream (source-stream.ts `events`), in order — the hybrid of a snapshot and the
 * binlog that DBLog describes, kept apart from the readers it drives (snapshot-reader.ts,
 * binlog-reader.ts), as flink-cdc keeps its hybrid split assigner apart from its split readers:
 *
 * 1. plan      each table's chunks: resumed from the caller's plan, or split now (`planChunks`);
 * 2. catch-up  only when a table still to copy changed while floe was stopped: the binlog up to the
 *              server's position now, so the remaining chunks are read with the definition the DDL
 *              left (`catchUp`);
 * 3. snapshot  the unfinished chunks, each between a low and a high watermark (`readChunks`);
 * 4. hand-over the binlog from the lowest high watermark, each change of a chunk's key dropped up
 *              to that chunk's high watermark (`handOverTables`, handover.ts);
 * 5. stream    the binlog on, unfiltered once past the highest (`stream`).
 *
 * Resume: a chunk the caller finished (its high watermark in `resume.finished`) is not read again;
 * the stream starts from the caller's offset when it has one.
 */
import { FloeError } from '../../util/errors.js';
import { failpoint } from '../../util/failpoints.js';
import { chunkId, chunkKeyColumns, parseChunk, serializeChunk, type Chunk } from './snapshot/chunk.js';
import type { SourceEvent, TableRef } from './events.js';
import { HandoverFilter, type HandoverTable } from './snapshot/handover.js';
import { createKeyComparator, serverCollationWeigher, type KeyComparator } from './snapshot/key-compare.js';
import { compareOffsets, isAfter, minOffset, parseOffset, serializeOffset, type BinlogOffset } from './offset/offset.js';
import { readSnapshot, type SnapshotTable } from './snapshot/snapshot-reader.js';
import { tableKey, type TableId } from './schema/table-schema.js';
import type { MappedTable } from './schema/type-mapping.js';
import type { BinlogReader } from './binlog/binlog-reader.js';
import type { StartPosition } from './binlog/start-position.js';
import { splitTable } from './snapshot/chunk-splitter.js';
import { changedDuringSnapshot } from './snapshot/table-change-guard.js';
import type { MappedTablesDecoding } from './binlog/binlog-decoding.js';
import { readWatermark } from './snapshot/watermark.js';
import type { MySqlSourceOptions, SourceControl, SourceResume } from './source-options.js';

const SUBSYSTEM = 'source.mysql';

/** What the phases read and drive: the stream's options, its control connection, decoding and tables. */
export interface PhaseContext {
  readonly options: Omit<MySqlSourceOptions, 'tables'>;
  readonly control: SourceControl;
  readonly decoding: MappedTablesDecoding;
  /** A captured table's mapping now (a DDL applied in the catch-up replaces it). */
  mappingOf(key: string): MappedTable | undefined;
  /** The tables whose deletes cascade into `table` (their chunks' windows must see those deletes). */
  cascadeTriggers(table: TableRef): TableId[];
  /** The tables whose chunks must all be read before `table`'s (snapshot/read-order.ts). */
  readAfter(table: TableRef): TableId[];
  /** A binlog reader from `start`, closed by the stream when it closes. */
  openReader(start: StartPosition): BinlogReader;
  closeReader(): Promise<void>;
}

/** Chunk progress: each table's finished chunks' high watermarks (by chunk index), and the counts. */
export interface ChunkMarks {
  readonly hw: Map<string, Map<number, BinlogOffset>>;
  readonly total: number;
  done: number;
}

/** 1. Each table's chunks — the caller's plan, or split now — as `snapshot-plan` events. */
export async function* planChunks(ctx: PhaseContext, tables: readonly MappedTable[], resume: SourceResume): AsyncGenerator<SourceEvent, SnapshotTable[]> {
  const o = ctx.options;
  const { client, dialect } = ctx.control;
  const weigher = serverCollationWeigher(client);
  const out: SnapshotTable[] = [];
  for (const m of tables) {
    const key = tableKey(m.schema.id);
    let chunks: Chunk[];
    try {
      if (resume.plans?.[key]) chunks = resume.plans[key].map(parseChunk);
      else if (o.snapshot?.splitter) chunks = await o.snapshot.splitter(client, m, dialect.flavor);
      else {
        chunks = [];
        for await (const c of splitTable(client, m, dialect.flavor, { chunkSize: o.snapshot?.chunkSize })) chunks.push(c);
      }
    } catch (e) {
      // dropped, renamed or altered since it was captured: floe starts again from the lake
      throw changedDuringSnapshot(m, e) ?? e;
    }
    yield { kind: 'snapshot-plan', table: m.schema.id, chunks: chunks.map((c) => ({ id: chunkId(c), range: serializeChunk(c) })) };
    // the hand-over and the chunk windows place a before image by its chunk key
    if (chunks.length > 0) ctx.decoding.keepInBefore(key, chunks[0]!.keyColumns);
    const comparator: KeyComparator = createKeyComparator(chunks.length ? chunkKeyColumns(m, chunks[0]!) : [], weigher);
    out.push({ table: m, chunks, comparator });
  }
  return out;
}

/** The chunks the caller finished before (their high watermarks in `resume.finished`). */
export function finishedMarks(tables: readonly SnapshotTable[], resume: SourceResume): ChunkMarks {
  const hw = new Map<string, Map<number, BinlogOffset>>();
  let done = 0;
  let total = 0;
  for (const t of tables) {
    const m = new Map<number, BinlogOffset>();
    for (const c of t.chunks) {
      const text = resume.finished?.[chunkId(c)];
      if (text !== undefined) {
        m.set(c.index, parseOffset(text));
        done++;
      }
    }
    total += t.chunks.length;
    hw.set(tableKey(t.table.schema.id), m);
  }
  return { hw, total, done };
}

/**
 * 2. The catch-up pass (options `changedDefinitions`): the binlog from the lowest point any table
 * needs (finished chunks' high watermarks, the streaming tables' offset) up to the server's position
 * now. Changes of finished chunks' keys after their high watermark pass; changes of chunks not read
 * yet are dropped (those chunks are read afterwards and hold them); DDL goes to the caller, which
 * applies it before it asks for the next event. Afterwards every finished chunk stands at the
 * returned position, as if its high watermark were there (`marks.hw` is updated), and streaming
 * continues from it. Returns that position and the tables with the mappings the DDLs left.
 */
export async function* catchUp(
  ctx: PhaseContext,
  tables: readonly SnapshotTable[],
  marks: ChunkMarks,
  streamingOffset: BinlogOffset | undefined,
  changed: readonly string[],
): AsyncGenerator<SourceEvent, { offset: BinlogOffset; tables: SnapshotTable[] }> {
  const o = ctx.options;
  const { hw } = marks;
  const target = await readWatermark(ctx.control.client, ctx.control.dialect, ctx.control.identity);
  // every table being snapshotted is filtered: one with no finished chunk yet gets none of its changes
  const filter = new HandoverFilter(tables.map((t) => ({ ...t, highWatermarks: hw.get(tableKey(t.table.schema.id))! })), { partial: true, mappingOf: (key) => ctx.mappingOf(key) });
  const withFinished = tables.filter((t) => hw.get(tableKey(t.table.schema.id))!.size > 0);
  const from = [...withFinished.flatMap((t) => [...hw.get(tableKey(t.table.schema.id))!.values()]), ...(streamingOffset ? [streamingOffset] : [])];
  if (from.length === 0) {
    throw new FloeError(
      SUBSYSTEM,
      'unsupported',
      `table(s) ${changed.join(', ')} changed in MySQL while floe was stopped, before any of their chunks was committed: there is no binlog position to apply the change from; drop the Iceberg table(s) so that floe snapshots them again`,
    );
  }
  // a table with no finished chunk is copied whole after the pass, with the definition captured
  // before it: its rows in the pass (the filter drops them all) may be of an older layout and are
  // not decoded
  for (const t of tables) if (hw.get(tableKey(t.table.schema.id))!.size === 0) ctx.decoding.skipThrough(tableKey(t.table.schema.id), target);
  const start = minOffset(from);
  o.log?.(`catch-up: ${changed.join(', ')} changed while floe was stopped; reading the binlog from ${serializeOffset(start)} to ${serializeOffset(target)} before the remaining chunks`);
  yield { kind: 'phase', phase: 'catch-up', offset: target };
  if (compareOffsets(start, target) < 0) {
    const reader = ctx.openReader({ kind: 'offset', offset: start });
    try {
      for await (const e of reader) {
        // An event committed after the target is left to the stream that follows (it starts there).
        if ((e.kind === 'transaction' || e.kind === 'ddl') && isAfter(e.position, target)) break;
        if (e.kind === 'transaction') yield await filter.filter(e);
        else yield e;
        if (e.offset && compareOffsets(e.offset, target) >= 0) break;
      }
    } finally {
      await ctx.closeReader();
    }
  }
  for (const t of withFinished) {
    const m = hw.get(tableKey(t.table.schema.id))!;
    for (const [i, h] of m) if (compareOffsets(h, target) < 0) m.set(i, target);
  }
  yield { kind: 'phase', phase: 'caught-up', offset: target };
  // the remaining chunks are read with the definitions the DDLs left
  const now = tables.map((t) => {
    const key = tableKey(t.table.schema.id);
    const mapped = ctx.mappingOf(key);
    if (!mapped) throw new FloeError(SUBSYSTEM, 'not-found', `table ${key} stopped being captured during the catch-up (dropped or renamed); restart floe`);
    return { ...t, table: mapped };
  });
  return { offset: target, tables: now };
}

/** 3. The chunks not finished yet, each read between its watermarks, as `snapshot-rows` and `progress` events. */
export async function* readChunks(ctx: PhaseContext, tables: readonly SnapshotTable[], marks: ChunkMarks, finished: ReadonlySet<string>): AsyncGenerator<SourceEvent> {
  const o = ctx.options;
  yield { kind: 'phase', phase: 'snapshot' };
  for await (const r of readSnapshot({
    connection: o.connection,
    dialect: ctx.control.dialect,
    identity: ctx.control.identity,
    tables,
    parallelism: o.snapshot?.parallelism,
    backfill: o.snapshot?.backfill,
    finished,
    decoding: ctx.decoding,
    serverIdBase: o.serverIdBase + 1,
    heartbeatMs: o.heartbeatMs,
    warn: o.warn ?? o.log,
    cascadeTriggers: (table) => ctx.cascadeTriggers(table),
    readAfter: (table) => ctx.readAfter(table),
  })) {
    // a chunk read and not yet handed on (crash tests kill floe here)
    await failpoint('snapshot-chunk-read');
    marks.hw.get(tableKey(r.table))!.set(r.chunk.index, r.highWatermark);
    marks.done++;
    yield { kind: 'snapshot-rows', table: r.table, chunk: r.descriptor, rows: r.rows, lowWatermark: r.lowWatermark, highWatermark: r.highWatermark, keyless: r.keyless };
    yield { kind: 'progress', chunksDone: marks.done, chunksTotal: marks.total };
  }
}

/** 4. The tables the hand-over filters, each with its chunks' high watermarks. */
export function handOverTables(ctx: PhaseContext, tables: readonly SnapshotTable[], marks: ChunkMarks): HandoverTable[] {
  return tables.map((t) => {
    const m = marks.hw.get(tableKey(t.table.schema.id))!;
    // The hand-over drops every change of the table up to its lowest chunk high watermark (the
    // chunks hold them), so those rows are not decoded: a table copied whole in this run (one
    // without a past, pipeline/tables/prepared-tables.ts) has today's definition, and the binlog from an
    // earlier table's watermark may hold its rows of a layout before a DDL made since.
    if (m.size > 0) ctx.decoding.skipThrough(tableKey(t.table.schema.id), minOffset([...m.values()]));
    return { ...t, highWatermarks: m };
  });
}

/**
 * 4–5. The binlog from the caller's offset, or else the lowest high watermark, or else where
 * streaming starts without a snapshot: filtered by the hand-over until past every chunk's high
 * watermark, then as it comes.
 */
export async function* stream(ctx: PhaseContext, handover: readonly HandoverTable[], resumeOffset: BinlogOffset | undefined): AsyncGenerator<SourceEvent> {
  const filter = handover.some((t) => t.chunks.length > 0) ? new HandoverFilter(handover, { mappingOf: (key) => ctx.mappingOf(key) }) : undefined;
  let start: StartPosition;
  if (resumeOffset) start = { kind: 'offset', offset: resumeOffset };
  else if (filter) start = { kind: 'offset', offset: filter.start };
  else start = ctx.options.startWhenNoSnapshot ?? { kind: 'latest' };
  if (filter) yield { kind: 'phase', phase: 'handover', offset: start.kind === 'offset' ? start.offset : filter.start };
  else yield { kind: 'phase', phase: 'streaming' };
  let streaming = !filter;
  for await (const e of ctx.openReader(start)) {
    if (e.kind === 'transaction' && filter && !streaming) {
      const t = await filter.filter(e);
      if (filter.finished) {
        streaming = true;
        yield { kind: 'phase', phase: 'streaming', offset: filter.end };
      }
      yield t;
      continue;
    }
    yield e;
  }
}
