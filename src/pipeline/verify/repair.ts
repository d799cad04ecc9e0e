/**
 * `floe verify --repair` (docs/verify.md "Repair"): the chunks that differ are copied again the way
 * the snapshot copies them — the DBLog chunk read (source repair-read.ts: each chunk's rows exactly at
 * its high watermark) — brought to the offset the lake stands at (window-apply.ts), and written
 * through the idempotent upsert writer floe run uses (iceberg/writer TableCommitter, mode `upsert`:
 * deletion vectors through the key index in format v3, equality deletes in v2) as an ordinary
 * checkpoint of the job: stamped with the next checkpoint id of the job and the table's own
 * `floe.source-offset` unchanged (the rows are the source's at that offset, so the table still holds
 * exactly the source up to it). Only what differs is written: rows only in MySQL or different are
 * upserted, rows only in the lake deleted. Then the chunks are compared again.
 *
 * The caller holds the job lock (job-lock.ts): no floe run writes the table meanwhile, so the
 * table's offset cannot move under the repair. Tables without a primary key are not repaired: their
 * rows have no identity to upsert on (re-snapshot such a table).
 */
import { TableCommitter, lastCommitted } from '../../iceberg/checkpoint/index.js';
import type { RowChange } from '../../iceberg/writer/index.js';
import { loadCatalogTable } from '../../iceberg/table/index.js';
import type { Row, Value } from '../../model/values.js';
import { maxOffset, readChunksForRepair, rowsAtOffset, type BinlogOffset, type Chunk } from '../../source/mysql/index.js';
import { FloeError } from '../../util/errors.js';
import { icebergIdentifier } from '../table-mapping.js';
import { compareRowByRow } from './row-level.js';
import type { TableRun } from './table-run.js';
import type { RepairOutcome } from './verify-result.js';
import type { VerifySession } from './verify-session.js';

/** Checkpoint ids for repairs: above everything the job committed to any of its tables. */
export class RepairCheckpoints {
  private next: bigint | undefined;

  constructor(private readonly session: VerifySession) {}

  async take(): Promise<bigint> {
    if (this.next === undefined) {
      let max = 0n;
      for (const m of this.session.source.tables.values()) {
        const identifier = icebergIdentifier(m.schema.id, this.session.config);
        if (!(await this.session.catalog.tableExists(identifier))) continue;
        const last = lastCommitted((await loadCatalogTable(this.session.catalog, identifier)).metadata, this.session.config.job.id);
        if (last && last.checkpointId > max) max = last.checkpointId;
      }
      this.next = max + 1n;
    }
    return this.next++;
  }
}

export async function repairChunks(run: TableRun, chunks: readonly Chunk[], checkpoints: RepairCheckpoints): Promise<RepairOutcome> {
  const { session, mapped, plan } = run;
  if (plan.identifierFields.length === 0) {
    throw new FloeError('pipeline.verify', 'unsupported', `table ${run.key} has no primary key: its rows have no identity to upsert on, so floe verify --repair leaves it alone; re-snapshot it (drop its Iceberg table and run floe again)`);
  }
  const { config } = session;
  const reads: { chunk: Chunk; rows: Row[]; low: BinlogOffset; high: BinlogOffset }[] = [];
  for await (const r of readChunksForRepair({
    connection: session.connection,
    dialect: session.source.dialect,
    identity: session.source.identity,
    table: mapped,
    captured: session.source.tables,
    cascades: session.cascades.rules,
    chunks,
    comparator: run.comparator,
    parallelism: session.options.parallelism,
    serverIdBase: session.options.serverIdBase + 1,
  })) {
    reads.push({ chunk: r.chunk, rows: r.rows, low: r.lowWatermark, high: r.highWatermark });
  }
  const lake = await run.lake();
  await run.log.until(maxOffset([lake.offset, ...reads.map((r) => r.high)]));
  const pass = await run.reader.read(lake, chunks, new Set(chunks.map((c) => c.index)));
  run.count(pass);

  const changes: RowChange[] = [];
  let rowsWritten = 0;
  let rowsDeleted = 0;
  const keyOf = (row: Row) => JSON.stringify(plan.identifierFields.map((i) => textOf(row[i] ?? null)));
  for (const read of reads) {
    // the rows are the table's at the high watermark; the window's changes, which the read applied
    // already, are applied again (harmless: full row images) so that a cascade inside the window whose
    // rows only the lake can name (change-log.ts) makes the chunk unresolvable instead of wrong
    const at = rowsAtOffset(mapped, read.rows, { low: read.low, high: read.high, exact: false }, lake.offset, run.log.changes);
    if ('unresolvable' in at) throw new FloeError('pipeline.verify', 'unsupported', `table ${run.key} chunk ${read.chunk.index}: cannot bring its rows to the lake's offset (${at.unresolvable}); run floe run until it has committed past it, then repair again`);
    const located = run.keyIdx.length === 0 || run.chunks.length === 1 ? undefined : await run.locator.locateMany(at.rows.map((r) => run.keyIdx.map((i) => r[i] as Value)));
    const mine = at.rows.filter((_, i) => !located || located[i] === read.chunk.index).map(plan.project);
    const lakeRows = new Map((pass.rows.get(read.chunk.index) ?? []).map((r) => [keyOf(r), r] as const));
    for (const m of mine) {
      const k = keyOf(m);
      const l = lakeRows.get(k);
      lakeRows.delete(k);
      if (l && plan.hasher.text(l) === plan.hasher.text(m)) continue;
      changes.push({ op: 'insert', after: m });
      rowsWritten++;
    }
    for (const l of lakeRows.values()) {
      changes.push({ op: 'delete', before: l });
      rowsDeleted++;
    }
  }

  const checkpointIds: string[] = [];
  if (changes.length > 0) {
    const committer = new TableCommitter({
      catalog: session.catalog,
      identifier: run.identifier,
      jobId: config.job.id,
      upsertDeletes: config.iceberg.upsertDeletes,
      keyIndexMaxRows: config.iceberg.keyIndexMaxRows,
      keyIndex: { stateDir: config.stateDir, memoryMaxRows: config.iceberg.keyIndex.memoryMaxRows, saveMinRows: config.iceberg.keyIndex.saveMinRows },
      warn: (m) => session.logger.warn(m, { table: run.key }),
      info: (m) => session.logger.info(m, { table: run.key }),
    });
    try {
      await committer.open({ mode: 'upsert' });
      await committer.write(changes);
      const id = await checkpoints.take();
      // the table's progress as it stands: the rows written are the source's at that very offset
      const outcome = await committer.commit(id, lake.committed.sourceOffset);
      if (outcome.status !== 'committed') throw new FloeError('pipeline.verify', 'commit-conflict', `table ${run.key}: the repair's checkpoint ${id} was found committed already; is a floe run of job ${config.job.id} writing the table? Stop it and repair again`);
      checkpointIds.push(id.toString());
      await committer.saveKeyIndex().catch(() => false);
    } finally {
      committer.close();
    }
  }
  const after = await compareRowByRow(run, chunks);
  const stillDiffering = [...after.values()].filter((v) => v.kind !== 'equal').length;
  return { chunks: chunks.length, rowsWritten, rowsDeleted, checkpointIds, stillDiffering };
}

function textOf(v: Value): string {
  if (v === null) return 'null';
  if (v instanceof Uint8Array) return `x${Buffer.from(v).toString('hex')}`;
  return `${typeof v}:${String(v)}`;
}
