/**
 * One table's verification in progress: its plan (verify-plan.ts), its chunks — the snapshot's own
 * split (chunk-splitter.ts, with the configured chunk key) — and their order on the server, the lake
 * reader, and the table's binlog from the lake's offset on (the change log). Built by `openTableRun`,
 * closed by its caller; table-verification.ts runs the comparison over it, repair.ts the repair.
 *
 * A table whose chunk key the lake does not hold as MySQL does (hashed, or left out of the
 * comparison) cannot place lake rows in chunks: it is compared as one chunk, and that is noted.
 */
import type { TableIdentifier } from '../../iceberg/metadata/catalog.js';
import { identifierToString } from '../../iceberg/metadata/catalog.js';
import type { Schema } from '../../iceberg/spec/schema.js';
import {
  ChunkLocator,
  chunkKeyColumns,
  createKeyComparator,
  keyCascadeTriggers,
  serverCollationWeigher,
  splitTable,
  TableChangeLog,
  tableKey,
  type Chunk,
  type KeyComparator,
  type MappedTable,
} from '../../source/mysql/index.js';
import { FloeError } from '../../util/errors.js';
import { icebergIdentifier } from '../table-mapping.js';
import { LakeReader, prunableKey, type LakePass } from './lake-chunks.js';
import { loadLakeState, type LakeState } from './lake-state.js';
import { chunkKeyFields, planVerification, type VerifyPlan } from './verify-plan.js';
import type { VerifySession } from './verify-session.js';

export interface LakeCounters {
  rowsRead: number;
  filesRead: number;
  bytesRead: number;
}

export class TableRun {
  readonly counters: LakeCounters = { rowsRead: 0, filesRead: 0, bytesRead: 0 };
  /** The last lake state compared with. */
  last: LakeState;

  constructor(
    readonly session: VerifySession,
    readonly mapped: MappedTable,
    readonly identifier: TableIdentifier,
    readonly plan: VerifyPlan,
    readonly chunks: readonly Chunk[],
    readonly comparator: KeyComparator,
    readonly locator: ChunkLocator,
    /** The chunk key columns' indexes in MySQL rows. */
    readonly keyIdx: readonly number[],
    readonly reader: LakeReader,
    readonly log: TableChangeLog,
    first: LakeState,
    readonly notes: string[],
  ) {
    this.last = first;
  }

  get key(): string {
    return tableKey(this.mapped.schema.id);
  }

  /** The lake now (it must still be comparable: its offset only moves forward while floe runs). */
  async lake(): Promise<LakeState> {
    const s = await loadLakeState(this.session.catalog, this.identifier, this.session.config.job.id);
    if ('notComparable' in s) throw new FloeError('pipeline.verify', 'invalid-data', `table ${identifierToString(this.identifier)} stopped being comparable during the verification: ${s.notComparable}`);
    this.last = s;
    return s;
  }

  count(pass: LakePass): void {
    this.counters.rowsRead += pass.rowsRead;
    this.counters.filesRead += pass.filesRead;
    this.counters.bytesRead += pass.bytesRead;
  }

  async close(): Promise<void> {
    await this.log.close();
  }
}

/** Opens a table's verification, or says why the table cannot be compared now. */
export async function openTableRun(session: VerifySession, mapped: MappedTable): Promise<TableRun | { skipped: string; iceberg: string }> {
  const { config, catalog } = session;
  const identifier = icebergIdentifier(mapped.schema.id, config);
  const iceberg = identifierToString(identifier);
  if (!(await catalog.tableExists(identifier))) return { skipped: 'it has no Iceberg table yet (floe run creates it)', iceberg };
  const lake = await loadLakeState(catalog, identifier, config.job.id);
  if ('notComparable' in lake) return { skipped: lake.notComparable, iceberg };
  const schema = currentSchema(lake.metadata.schemas, lake.metadata.currentSchemaId, iceberg);
  const plan = planVerification(config, mapped, schema, session.floatStyle);
  const notes: string[] = [];
  const key = tableKey(mapped.schema.id);
  let chunks: Chunk[] = [];
  for await (const c of splitTable(session.control, mapped, session.server.dialect.flavor, { chunkSize: session.options.chunkSize, chunkKeyColumn: config.source!.snapshot.chunkKeys[key] })) chunks.push(c);
  let keyFields = chunks[0]!.keyColumns.length > 0 ? chunkKeyFields(plan, chunks[0]!.keyColumns) : undefined;
  if (chunks[0]!.keyColumns.length > 0 && !keyFields) {
    notes.push(`compared as one chunk: the lake does not hold its chunk key (${chunks[0]!.keyColumns.join(', ')}) as MySQL does (hashed or left out), so its rows cannot be placed in key ranges`);
    chunks = [{ table: mapped.schema.id, index: 0, keyColumns: [], ...(chunks[0]!.keyless ? { keyless: true } : {}) }];
    keyFields = undefined;
  }
  const comparator = createKeyComparator(chunks[0]!.keyColumns.length > 0 ? chunkKeyColumns(mapped, chunks[0]!) : [], serverCollationWeigher(session.control));
  const locator = new ChunkLocator(comparator, chunks);
  const keyIdx = chunks[0]!.keyColumns.map((name) => mapped.columns.findIndex((c) => c.column.name === name));
  const prunable = prunableKey(plan, keyFields);
  const reader = new LakeReader(plan, { locator, keyFields, ...(prunable ? { prunable } : {}) });
  const log = new TableChangeLog({
    connection: session.connection,
    dialect: session.source.dialect,
    identity: session.source.identity,
    table: mapped,
    captured: session.source.tables,
    cascades: session.cascades.rules,
    keyTriggers: keyCascadeTriggers(session.cascades, tableKey(mapped.schema.id)),
    serverId: session.options.serverIdBase,
    start: lake.offset,
  });
  return new TableRun(session, mapped, identifier, plan, chunks, comparator, locator, keyIdx, reader, log, lake, notes);
}

function currentSchema(schemas: readonly Schema[], id: number, name: string): Schema {
  const s = schemas.find((x) => x.schemaId === id);
  if (!s) throw new FloeError('pipeline.verify', 'invalid-data', `table ${name}: its current schema ${id} is missing from its metadata`);
  return s;
}
