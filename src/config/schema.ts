/**
 * floe's configuration file, validated with zod. The JSON Schema in `schemas/floe-config.schema.json`
 * is generated from this module (`npm run gen:config-schema`) so editors can complete and check it.
 *
 * Every field has a default that makes sense for the quickstart: a local warehouse directory, the
 * filesystem catalog, format v3, evolve on DDL.
 */
import { z } from 'zod';

/** `new URL(text)`, or undefined: the refinements below report a bad URL without quoting it (it may hold a password). */
function parsedUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

const mysqlUrl = z.string().superRefine((text, ctx) => {
  const u = parsedUrl(text);
  const found = u ? `the scheme ${u.protocol}//` : 'a string that is not a URL';
  if (!u || (u.protocol !== 'mysql:' && u.protocol !== 'mariadb:')) ctx.addIssue({ code: 'custom', message: `expected mysql://user:password@host:port (or mariadb://), found ${found}; percent-encode a password's reserved characters (/ ? # @ : as %2F %3F %23 %40 %3A)` });
  else if (u.port !== '' && (Number(u.port) < 1 || Number(u.port) > 65535)) ctx.addIssue({ code: 'custom', message: 'expected a port 1..65535 in the URL' });
});

/** Endpoints floe speaks HTTP to: zod's plain url() takes any scheme ("u:pw@host" parses as the scheme u:). */
const httpUrl = z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL (percent-encode reserved characters in a user or password)' });

/** What src/catalog/sql/sql-url.ts opens; checked here so every command refuses a bad one up front. */
const sqlCatalogUrl = z
  .string()
  .min(1)
  .superRefine((text, ctx) => {
    const t = text.trim().replace(/^jdbc:/i, '');
    const scheme = /^([a-z0-9+.-]+):/i.exec(t)?.[1]?.toLowerCase();
    const expected = 'expected postgresql://user:pass@host:port/db, mysql://user:pass@host:port/db or sqlite:/path/to/catalog.db';
    if (scheme === 'sqlite') {
      if (t.length === 'sqlite:'.length) ctx.addIssue({ code: 'custom', message: `${expected}, found sqlite: without a file` });
    } else if (scheme === 'postgresql' || scheme === 'postgres' || scheme === 'mysql' || scheme === 'mariadb') {
      if (!parsedUrl(t)) ctx.addIssue({ code: 'custom', message: `${expected}, found a ${scheme}: string that is not a URL; percent-encode a password's reserved characters (/ ? # @ : as %2F %3F %23 %40 %3A)` });
    } else ctx.addIssue({ code: 'custom', message: `${expected}, found ${scheme === undefined ? 'no scheme' : `the scheme ${scheme}:`}` });
  });

const tablePattern = z
  .string()
  .min(1)
  .describe("A `db.table` pattern: `*` matches any run of characters, e.g. `shop.*`, `*.orders`; `/regex/` for a regular expression over `db.table`.");

const binlogStart = z.union([
  z.literal('earliest'),
  z.literal('latest'),
  z.object({ gtid: z.string().min(1).describe('MySQL GTID set or MariaDB GTID position to start after') }).strict(),
  z.object({ file: z.string().min(1), position: z.number().int().nonnegative() }).strict(),
]);

export const sourceSchema = z
  .object({
    url: mysqlUrl.optional().describe('mysql://user:password@host:port — alternative to host/port/user/password'),
    host: z.string().default('127.0.0.1'),
    port: z.number().int().min(1).max(65535).default(3306),
    user: z.string().default('root'),
    password: z.string().default(''),
    serverId: z
      .number()
      .int()
      .min(1)
      .max(4294967295)
      .default(5401)
      .describe('Replica server id floe uses for the binlog connection; must be unique among the replicas of the source'),
    include: z.array(tablePattern).default(['*.*']).describe('Tables to capture'),
    exclude: z.array(tablePattern).default([]).describe('Tables never to capture (wins over include)'),
    snapshot: z
      .object({
        mode: z
          .enum(['initial', 'never', 'schema-only'])
          .default('initial')
          .describe('initial: copy existing rows, then stream; never: only stream from `startPosition`; schema-only: create tables, then stream from now'),
        chunkSize: z.number().int().min(1).default(8096),
        parallelism: z.number().int().min(1).max(64).default(4),
        backfill: z
          .boolean()
          .default(true)
          .describe('Apply binlog changes inside each chunk window (exactly the DBLog algorithm). false is cheaper but at-least-once.'),
        chunkKeys: z.record(z.string(), z.string()).default({}).describe('`db.table` → column to split on (default: the primary key)'),
      })
      .strict()
      .prefault({}),
    startPosition: binlogStart.default('latest').describe('Where streaming starts when snapshot.mode is never'),
    tinyint1AsBoolean: z.boolean().default(true),
    timeAsMicros: z
      .array(z.string())
      .default([])
      .describe('`db.table.column` TIME columns stored as long microseconds (durations) instead of Iceberg time'),
    heartbeatMs: z
      .number()
      .int()
      .min(100)
      .max(600_000)
      .default(2000)
      .describe(
        'Heartbeat period floe asks the server for on its binlog connections (ms): an idle server sends a heartbeat after each silent period, and a connection that stays silent for 3 periods is taken as stalled — floe drops it and reconnects from the last delivered transaction',
      ),
    binlogThread: z
      .enum(['worker', 'main'])
      .default('worker')
      .describe(
        "Where the streaming binlog connection runs: 'worker' (a worker thread reads the socket and assembles transactions beside the pipeline, which decodes and writes) or 'main' (one thread does everything)",
      ),
    restart: z
      .object({
        maxAttempts: z.number().int().min(0).default(10).describe('Restarts in a row after a connection-level MySQL failure (server restarted, connection lost) before floe gives up; 0 stops at the first'),
        initialDelayMs: z.number().int().min(0).default(1000).describe('Wait before the first restart; doubled for each further one'),
        maxDelayMs: z.number().int().min(0).default(30_000).describe('Longest wait between two restarts'),
      })
      .strict()
      .default({ maxAttempts: 10, initialDelayMs: 1000, maxDelayMs: 30_000 })
      .describe('How floe run resumes after the MySQL server went away: the pipeline starts again from the lake, as a new process would'),
  })
  .strict();

const s3Schema = z
  .object({
    endpoint: httpUrl.optional(),
    region: z.string().default('us-east-1'),
    pathStyle: z.boolean().default(false),
    accessKeyId: z.string().optional(),
    secretAccessKey: z.string().optional(),
    sessionToken: z.string().optional(),
  })
  .strict();

const warehouseSchema = z
  .object({
    location: z.string().min(1).default('./warehouse').describe('A local directory or s3://bucket/prefix'),
    s3: s3Schema.prefault({}),
  })
  .strict();

const catalogSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('filesystem'), name: z.string().default('floe') }).strict(),
  z
    .object({
      type: z.literal('sql'),
      name: z.string().default('floe').describe('catalog_name column value; engines must use the same name'),
      url: sqlCatalogUrl.describe('postgresql://…, mysql://…, or sqlite:/path/to/catalog.db'),
    })
    .strict(),
  z
    .object({
      type: z.literal('rest'),
      name: z.string().default('floe'),
      uri: httpUrl,
      warehouse: z.string().optional(),
      token: z.string().optional().describe('Bearer token'),
      credential: z.string().optional().describe('OAuth2 client credentials as client_id:client_secret'),
      oauth2ServerUri: httpUrl.optional(),
      scope: z.string().optional(),
    })
    .strict(),
]);

const tableOverrideSchema = z
  .object({
    namespace: z.string().optional(),
    name: z.string().optional(),
    partitionBy: z
      .array(z.string())
      .optional()
      .describe('Partition transforms, e.g. ["day(created_at)", "bucket(16, id)", "truncate(4, name)", "region"]'),
    properties: z.record(z.string(), z.string()).optional(),
    formatVersion: z
      .union([z.literal(2), z.literal(3)])
      .optional()
      .describe('Format version of this table when floe creates it (default iceberg.formatVersion); an existing table keeps its own'),
  })
  .strict();

const icebergSchema = z
  .object({
    formatVersion: z.union([z.literal(2), z.literal(3)]).default(3),
    targetFileSizeBytes: z.number().int().min(1024).default(128 * 1024 * 1024),
    upsertDeletes: z
      .enum(['deletion-vectors', 'equality'])
      .default('deletion-vectors')
      .describe('Format v3: how an update or delete removes the old row — deletion vectors through a primary-key index (no equality deletes; every engine reads them), or equality deletes. Format v2 always uses equality deletes'),
    keyIndexMaxRows: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('The ceiling of the primary-key index of deletion-vector upserts: a table with more live rows uses equality deletes instead, with a warning (default 1 billion; the index lives on disk beyond iceberg.keyIndex.memoryMaxRows)'),
    keyIndex: z
      .object({
        memoryMaxRows: z
          .number()
          .int()
          .min(0)
          .default(2_000_000)
          .describe('A table\'s key index stays in memory (~100 bytes per live row) up to this many rows; beyond, it lives in SQLite under stateDir (kept across restarts)'),
        saveMinRows: z
          .number()
          .int()
          .min(0)
          .default(100_000)
          .describe('At a clean stop, a memory key index of at least this many rows is saved under stateDir and taken back at the next start instead of being built from the lake (a smaller one is built in well under a second)'),
      })
      .strict()
      .prefault({}),
    properties: z.record(z.string(), z.string()).default({}),
  })
  .strict();

const transformSchema = z.discriminatedUnion('type', [
  z.object({ column: z.string().describe('db.table.column pattern'), type: z.literal('hash'), salt: z.string().default('') }).strict(),
  z.object({ column: z.string(), type: z.literal('mask'), keepLast: z.number().int().min(0).default(0) }).strict(),
  z.object({ column: z.string(), type: z.literal('drop') }).strict(),
]);

export const configSchema = z
  .object({
    job: z
      .object({
        id: z.string().min(1).regex(/^[A-Za-z0-9._-]+$/).default('floe').describe('Stable identity of this pipeline; stamped on every snapshot as floe.job-id'),
      })
      .strict()
      .prefault({}),
    source: sourceSchema.optional().describe('The MySQL source; `floe demo` starts a local one when absent'),
    warehouse: warehouseSchema.prefault({}),
    catalog: catalogSchema.default({ type: 'filesystem', name: 'floe' }),
    tables: z
      .object({
        namespace: z.string().default('{database}').describe('Iceberg namespace template; {database} is the source database'),
        name: z.string().default('{table}'),
        overrides: z.record(z.string(), tableOverrideSchema).default({}).describe('`db.table` → per-table settings'),
      })
      .strict()
      .prefault({}),
    iceberg: icebergSchema.prefault({}),
    stateDir: z
      .string()
      .min(1)
      .default('./.floe/state')
      .describe('Local state of floe run: the disk-backed key indexes (<stateDir>/<job id>/<table uuid>.keyindex.sqlite) and the memory ones a clean stop saves (….keyindex.mem), a cache of the lake that may be deleted at any time (`--state-dir` overrides)'),
    commit: z
      .object({
        intervalMs: z.number().int().min(100).default(10_000).describe('Checkpoint this many milliseconds after the checkpoint before ended (at a transaction boundary): a change is committed at most this long after the checkpoint before it, also when no event follows it'),
        maxBufferedChanges: z
          .number()
          .int()
          .min(1)
          .default(500_000)
          .describe('Checkpoint early when this many row changes are buffered (bounds memory: the writers keep one index entry per buffered key)'),
        maxOpenFiles: z
          .number()
          .int()
          .min(1)
          .default(512)
          .describe('Checkpoint early when the buffered changes have opened this many data files (a partitioned table opens one per partition its rows touch): bounds how long one commit takes, so that a snapshot over many partitions lands progress between restarts. Snapshot chunks are committed whole, so one chunk may open more (at most its rows)'),
        idleCheckpoints: z
          .number()
          .int()
          .min(1)
          .default(10)
          .describe("A table without changes still records the stream's offset every this many checkpoints (an empty snapshot), so that a restart does not re-read a long stretch of binlog"),
        idleMaxMs: z
          .number()
          .int()
          .min(1000)
          .default(600_000)
          .describe('… or when its last commit is this old'),
        whenCaughtUp: z
          .boolean()
          .default(true)
          .describe('Also checkpoint as soon as the binlog stream goes quiet (no event for 25 ms) after at least intervalMs of changes without a pause: a backlog drained is committed at once, not up to an interval later (at most one such checkpoint per interval of changes; never during a snapshot)'),
      })
      .strict()
      .prefault({}),
    maintenance: z
      .object({
        enabled: z.boolean().default(true).describe('floe run expires old snapshots of the tables it writes, between its own commits'),
        intervalMs: z.number().int().min(1000).default(600_000).describe('Run maintenance every this many milliseconds (after a checkpoint)'),
        expireSnapshots: z
          .object({
            olderThanMs: z.number().int().min(0).default(3_600_000).describe('Snapshots older than this may expire (unless among the last retainLast)'),
            retainLast: z.number().int().min(1).default(10).describe('Snapshots kept on main whatever their age'),
          })
          .strict()
          .prefault({}),
        compaction: z
          .object({
            enabled: z.boolean().default(true).describe('Format v2 and v3 tables: rewrite the data files deletes apply to with their live rows (v3: keeping each row\'s _row_id and _last_updated_sequence_number), dropping the delete files and deletion vectors'),
            minDeleteFiles: z.number().int().min(1).default(100).describe('… when at least this many delete files (v3: deletion vectors, one per data file with deletes) are live (each rewrite reads every data file a delete applies to)'),
            minDeletedRowsRatio: z
              .number()
              .gt(0)
              .max(1)
              .default(0.1)
              .describe('… v3 tables also when the rows their deletion vectors and position deletes remove are at least this fraction of the records in their data files (snapshot summary total-position-deletes / total-records): readers read and drop every such row'),
            smallFiles: z
              .boolean()
              .default(true)
              .describe("Also bin-pack small data files, deletes or not (Java RewriteDataFiles' bin-pack): per partition, the files smaller than minFileSizeBytes are rewritten together, their deletes applied, into files of the table's write.target-file-size-bytes"),
            minInputFiles: z.number().int().min(2).default(5).describe('… when a partition has at least this many small files (Java min-input-files), or small files holding more than one target file'),
            minFileSizeBytes: z
              .number()
              .int()
              .min(1)
              .optional()
              .describe("… a data file smaller than this is small (Java min-file-size-bytes; default: 75% of the table's write.target-file-size-bytes)"),
            maxFileGroupSizeBytes: z
              .number()
              .int()
              .min(1)
              .default(100 * 1024 * 1024 * 1024)
              .describe('… at most this many bytes of small files are packed into one group (Java max-file-group-size-bytes, default 100 GiB); each group must reach minInputFiles on its own'),
          })
          .strict()
          .prefault({}),
        manifests: z
          .object({
            enabled: z.boolean().default(true).describe("Rewrite a table's small manifests into fewer (a `replace` snapshot; Iceberg RewriteManifests): scan planning reads every manifest"),
            minCount: z.number().int().min(1).default(100).describe('… when the current snapshot has more than this many manifests smaller than targetSizeBytes'),
            targetSizeBytes: z
              .number()
              .int()
              .min(1024)
              .optional()
              .describe("Size of a rewritten manifest (default: the table's commit.manifest.target-size-bytes, 8 MiB)"),
          })
          .strict()
          .prefault({}),
        removeOrphans: z
          .object({
            olderThanMs: z
              .number()
              .int()
              .min(1000)
              .default(3 * 86_400_000)
              .describe('Unreferenced files younger than this stay (it protects commits in flight; Java default 3 days). Below one minute only with allowShortWindow'),
            intervalMs: z.number().int().min(1000).default(86_400_000).describe('floe run removes orphan files every this many milliseconds'),
            allowShortWindow: z
              .boolean()
              .default(false)
              .describe('Accept olderThanMs below one minute: safe only when no other writer commits to the tables (floe itself removes orphans between its own commits) — crash tests use it'),
          })
          .strict()
          .prefault({})
          .refine((o) => o.olderThanMs >= 60_000 || o.allowShortWindow, {
            message:
              'maintenance.removeOrphans.olderThanMs below 60000 ms can delete the files of another writer\'s commit in flight; expected at least 60000, or set maintenance.removeOrphans.allowShortWindow: true when floe is the only writer',
          }),
      })
      .strict()
      .prefault({}),
    schemaChanges: z.enum(['evolve', 'fail', 'stop']).default('evolve'),
    transforms: z.array(transformSchema).default([]),
    notifications: z
      .object({
        webhook: z
          .object({ url: httpUrl, headers: z.record(z.string(), z.string()).default({}) })
          .strict()
          .optional(),
      })
      .strict()
      .prefault({}),
    metrics: z.object({ port: z.number().int().min(0).max(65535).optional() }).strict().prefault({}),
  })
  .strict();

export type FloeConfig = z.infer<typeof configSchema>;
export type SourceConfig = z.infer<typeof sourceSchema>;
export type CatalogConfig = z.infer<typeof catalogSchema>;
export type WarehouseConfig = z.infer<typeof warehouseSchema>;
