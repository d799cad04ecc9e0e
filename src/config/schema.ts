/**
 * floe's configuration file, validated with zod. The JSON Schema in `schemas/floe-config.schema.json`
 * is generated from this module (`npm run gen:config-schema`) so editors can complete and check it.
 *
 * Every field has a default that makes sense for the quickstart: a local warehouse directory, the
 * filesystem catalog, format v3, evolve on DDL.
 */
import { z } from 'zod';
import { isPemText } from '../util/pem.js';

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
  // parameter names only: a value may be a secret
  else if (u.search !== '') ctx.addIssue({ code: 'custom', message: `expected no query parameters, found ${[...new Set(u.searchParams.keys())].map((k) => JSON.stringify(k)).join(', ')}; TLS is set with source.tls (mode, ca, cert, key)` });
});

/**
 * A certificate or key setting: a file path, or the PEM text itself (a `${VAR}` holding it), told
 * apart by the `-----BEGIN` line (src/util/pem.ts). Messages never quote the value: it may be a key.
 */
const pemSetting = z
  .string()
  .min(1)
  .superRefine((text, ctx) => {
    if (isPemText(text)) {
      if (!text.includes('-----END')) ctx.addIssue({ code: 'custom', message: 'expected PEM text from -----BEGIN to -----END, found no -----END line (the text is cut short)' });
    } else if (/[\r\n]/.test(text)) {
      ctx.addIssue({ code: 'custom', message: 'expected a file path, or PEM text starting with its -----BEGIN line, found several lines without one' });
    }
  });

const TLS_MODES = ['disabled', 'preferred', 'required', 'verify-ca', 'verify-identity'] as const;

/** `source.tls` (src/source/mysql/tls/tls-settings.ts; docs/tls.md). */
const tlsSchema = z
  .object({
    mode: z
      .enum(TLS_MODES)
      .default('preferred')
      .describe(
        "disabled: no TLS; preferred: TLS when the server offers it, the certificate not checked (the MySQL client's default); required: TLS, the certificate not checked; verify-ca: TLS, the server certificate chains to `ca`; verify-identity: also names the host (source.host)",
      ),
    ca: pemSetting.optional().describe('The CA certificate(s) the server certificate must chain to (verify-ca, verify-identity): a PEM file path or the PEM text'),
    cert: pemSetting.optional().describe('A client certificate (a user created REQUIRE X509): a PEM file path or the PEM text; needs `key`'),
    key: pemSetting.optional().describe("The client certificate's private key (unencrypted PEM): a file path or the PEM text, e.g. ${FLOE_SOURCE_TLS_KEY}"),
  })
  .strict()
  .superRefine((tls, ctx) => {
    const issue = (path: string, message: string): void => ctx.addIssue({ code: 'custom', path: [path], message });
    if (tls.cert !== undefined && tls.key === undefined) issue('cert', 'expected source.tls.key with a client certificate, found none: set the private key that belongs to it');
    if (tls.key !== undefined && tls.cert === undefined) issue('key', 'expected source.tls.cert with a private key, found none: set the client certificate it belongs to');
    const given = (['ca', 'cert', 'key'] as const).filter((k) => tls[k] !== undefined);
    if (tls.mode === 'disabled' && given.length > 0) {
      issue('mode', `expected no ${given.join(', ')} with mode disabled (no TLS: they would be ignored), found ${given.length === 1 ? 'it' : 'them'}; set mode: required, verify-ca or verify-identity, or remove them`);
    } else if ((tls.mode === 'preferred' || tls.mode === 'required') && tls.ca !== undefined) {
      issue('ca', `mode ${tls.mode} does not check the server certificate, so ca would be ignored: set mode: verify-ca (the certificate chains to ca) or verify-identity (and names source.host)`);
    }
    if (tls.mode === 'verify-ca' && tls.ca === undefined) {
      // the public CAs issue certificates to anyone for their own names: a chain to one of them, with
      // the name unchecked, says nothing about the server
      issue('ca', 'expected the CA certificate that issued the server certificate with mode verify-ca, found none: set ca (a path or PEM text), or use verify-identity, which checks the host name against the public CAs when ca is not set');
    }
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
    tls: tlsSchema.prefault({}).describe('TLS to the source, for every connection floe opens to it (docs/tls.md)'),
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
    timeAs: z
      .enum(['time', 'micros'])
      .default('time')
      .describe(
        "How every TIME column is stored: 'time' (Iceberg time, 00:00–24:00; Spark cannot read a table that has one) or 'micros' (long microseconds, durations −838:59:59…838:59:59 included; every engine reads it)",
      ),
    timeAsMicros: z
      .array(z.string())
      .default([])
      .describe('`db.table.column` TIME columns stored as long microseconds (durations) whatever `timeAs` says'),
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
      .describe('The ceiling of the primary-key index of deletion-vector upserts: a table with more live rows uses equality deletes instead, with a warning (default 1 billion; the index lives on disk beyond iceberg.keyIndex.memoryMaxBytes)'),
    keyIndex: z
      .object({
        memoryMaxBytes: z
          .number()
          .int()
          .min(0)
          .default(1024 * 1024 * 1024)
          .describe('A table\'s key index stays in memory up to this many bytes (8 per row of a snapshotted integer key, about 34 per row an update moved or per string key); beyond, it lives in SQLite under stateDir. Either way it persists under stateDir and survives restarts and crashes'),
        memoryMaxRows: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe('A table\'s key index also moves to SQLite under stateDir beyond this many live rows (default: no such bound, only memoryMaxBytes)'),
        saveMinRows: z
          .number()
          .int()
          .min(0)
          .default(100_000)
          .describe('A memory key index of at least this many rows is persisted under stateDir as it changes, and taken back at the next start — after a clean stop or a crash — instead of being built from the lake (a smaller one is built in well under a second)'),
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
      .describe('Local state of floe run: the key indexes, persisted as they change (<stateDir>/<job id>/<table uuid>.keyindex and .keyindex.log; on disk beyond the memory bound, ….keyindex.sqlite), a cache of the lake that may be deleted at any time (`--state-dir` overrides)'),
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
    verify: z
      .object({
        intervalMs: z
          .number()
          .int()
          .min(1000)
          .optional()
          .describe('floe run verifies its tables against MySQL this often (ms; hours are typical), in a `floe verify` process of its own started in the background (never repairing); the result goes to the floe_verify_* metrics and a notification. Off when absent'),
        chunkSize: z.number().int().min(1).optional().describe('Rows per verified chunk (default source.snapshot.chunkSize)'),
        parallelism: z.number().int().min(1).max(64).default(1).describe("Chunks floe run's scheduled verification reads on the server at a time (`floe verify --parallelism` defaults to source.snapshot.parallelism)"),
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
