/**
 * Commit routes of `floe catalog serve`.
 *
 * `POST …/tables/{table}` (CommitTableRequest): the served catalog checks the requirements against
 * the current metadata, applies the updates with the metadata builder and swaps its pointer (its own
 * compare-and-swap: create-if-absent of `v<N+1>` for the filesystem catalog, the conditional UPDATE
 * for the SQL catalog). With `assert-create` the table is created from the updates — the second half
 * of a staged create. That is two steps on the served catalog (create the table with its schema,
 * spec, order, location and properties; then commit any snapshots and refs), not one atomic step: a
 * crash between them leaves an empty table, which the client's retry then finds (409).
 *
 * `POST /v1/{prefix}/transactions/commit`: atomic when the served catalog implements
 * `commitTransaction` (the SQL catalog: one database transaction). Otherwise (the filesystem catalog)
 * it is best effort: every table's requirements are checked first, then the tables are committed one
 * after another; if one fails after others landed, the answer is 500 CommitStateUnknownException
 * naming the tables that landed — never a 409, so that no client deletes files a landed commit uses.
 */
import { applyUpdates, checkRequirements } from '../../iceberg/metadata/metadata-builder.js';
import type { MetadataUpdate } from '../../iceberg/metadata/metadata-updates.js';
import { commitTableRequestFromJson } from '../../iceberg/metadata/metadata-updates-json.js';
import { asArray, asObject } from '../../iceberg/spec/schema-json.js';
import { tableMetadataToJson } from '../../iceberg/spec/table-metadata-json.js';
import { errorMessage, FloeError, isFloeError } from '../../util/errors.js';
import { identifierToString, type LoadedTable, type TableCommit, type TableIdentifier } from '../../iceberg/metadata/catalog.js';
import { sameTable } from '../identifiers.js';
import { HttpError } from './error-response.js';
import { creationRequestOf, parseOr400, tableNotFound, type HandlerContext, type Reply } from './handler-context.js';

/** Updates that only describe the initial table (carried by Catalog.createTable itself). */
const CREATION_UPDATES: ReadonlySet<MetadataUpdate['action']> = new Set([
  'assign-uuid',
  'upgrade-format-version',
  'add-schema',
  'set-current-schema',
  'add-spec',
  'set-default-spec',
  'add-sort-order',
  'set-default-sort-order',
  'set-location',
  'set-properties',
  'remove-properties',
]);

async function createFromUpdates(ctx: HandlerContext, identifier: TableIdentifier, commit: TableCommit): Promise<LoadedTable> {
  if (await ctx.catalog.tableExists(identifier)) {
    throw new HttpError(409, 'CommitFailedException', `requirement failed: table ${identifierToString(identifier)} already exists (assert-create)`);
  }
  const others = commit.requirements.filter((r) => r.type !== 'assert-create');
  if (others.length > 0) throw new HttpError(400, 'BadRequestException', `assert-create cannot be combined with ${others.map((r) => r.type).join(', ')}`);
  let planned;
  try {
    planned = applyUpdates(undefined, commit.updates);
  } catch (e) {
    throw new HttpError(400, 'BadRequestException', `the create transaction's updates do not describe a valid table: ${errorMessage(e)}`);
  }
  let created: LoadedTable;
  try {
    created = await ctx.catalog.createTable(identifier, creationRequestOf(planned));
  } catch (e) {
    if (isFloeError(e, 'already-exists')) throw new HttpError(409, 'CommitFailedException', `requirement failed: ${e.message}`);
    return tableNotFound(ctx, identifier, e);
  }
  const rest = commit.updates.filter((u) => !CREATION_UPDATES.has(u.action));
  if (rest.length === 0) return created;
  return ctx.catalog.commitTable(identifier, [{ type: 'assert-table-uuid', uuid: created.metadata.tableUuid }], rest);
}

function parseCommit(raw: unknown): TableCommit & { identifierGiven: boolean } {
  const body = parseOr400('commit table request', () => commitTableRequestFromJson(raw));
  return { identifier: body.identifier ?? { namespace: [], name: '' }, identifierGiven: body.identifier !== undefined, requirements: body.requirements, updates: body.updates };
}

export async function commitTable(ctx: HandlerContext, identifier: TableIdentifier): Promise<Reply> {
  const commit = parseCommit(await ctx.body());
  if (commit.identifierGiven && !sameTable(commit.identifier, identifier)) {
    throw new HttpError(400, 'BadRequestException', `the body names table ${identifierToString(commit.identifier)} but the path names ${identifierToString(identifier)}`);
  }
  let table: LoadedTable;
  if (commit.requirements.some((r) => r.type === 'assert-create')) {
    table = await createFromUpdates(ctx, identifier, { ...commit, identifier });
  } else {
    table = await ctx.catalog.commitTable(identifier, commit.requirements, commit.updates).catch((e: unknown) => tableNotFound(ctx, identifier, e));
  }
  return { status: 200, body: { 'metadata-location': table.metadataLocation, metadata: tableMetadataToJson(table.metadata) } };
}

export async function commitTransaction(ctx: HandlerContext): Promise<Reply> {
  const raw = await ctx.body();
  const changes = parseOr400('commit transaction request', () =>
    asArray(asObject(raw, 'commit transaction request')['table-changes'], 'table-changes').map((c, i) => {
      const commit = parseCommit(c);
      if (!commit.identifierGiven) throw new Error(`table-changes[${i}]: identifier is required in a transaction`);
      return commit;
    }),
  );
  for (let i = 0; i < changes.length; i++) {
    for (let j = i + 1; j < changes.length; j++) {
      if (sameTable(changes[i]!.identifier, changes[j]!.identifier)) throw new HttpError(400, 'BadRequestException', `table ${identifierToString(changes[i]!.identifier)} appears twice in table-changes`);
    }
    if (changes[i]!.requirements.some((r) => r.type === 'assert-create')) throw new HttpError(400, 'BadRequestException', 'assert-create is not supported inside a multi-table transaction; create the table first');
  }
  const catalog = ctx.catalog;
  if (catalog.commitTransaction) {
    await catalog.commitTransaction(changes).catch(async (e: unknown) => {
      if (isFloeError(e, 'not-found')) {
        for (const c of changes) if (!(await catalog.tableExists(c.identifier))) await tableNotFound(ctx, c.identifier, e);
      }
      throw e;
    });
    return { status: 204 };
  }
  // Best effort (module comment): check everything first, so that a stale transaction changes nothing.
  for (const c of changes) {
    const base = await catalog.loadTable(c.identifier).catch((e: unknown) => tableNotFound(ctx, c.identifier, e));
    checkRequirements(base.metadata, c.requirements);
    applyUpdates(base.metadata, c.updates, { metadataLocationOfBase: base.metadataLocation });
  }
  const landed: string[] = [];
  for (const c of changes) {
    try {
      await catalog.commitTable(c.identifier, c.requirements, c.updates);
      landed.push(identifierToString(c.identifier));
    } catch (e) {
      if (landed.length === 0) throw e;
      // Delivery guarantee weakens here: a partial multi-table commit on a non-transactional catalog.
      throw new FloeError('catalog.server', 'commit-state-unknown', `transaction partially committed: ${landed.join(', ')} landed, then ${identifierToString(c.identifier)} failed (${errorMessage(e)}); the served catalog has no multi-table transactions — reload every table of the transaction before retrying`, { cause: e });
    }
  }
  return { status: 204 };
}
