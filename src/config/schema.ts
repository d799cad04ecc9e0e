/**
 * floe's configuration file, validated with zod. The JSON Schema in `schemas/floe-config.schema.json`
 * is generated from this module (`npm run gen:config-schema`) so editors can complete and check it.
 *
 * Every field has a default that makes sense for the quickstart: a local warehouse directory, the
 * filesystem catalog, format v3, evolve on DDL.
 */
import { z } from 'zod';
import { sourceSchema } from './source-schema.js';
import { httpUrl, sqlCatalogUrl } from './url-settings.js';

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
    properties: z
      .record(z.string(), z.string())
      .optional()
      .describe('Table properties of this table when floe creates it, over iceberg.properties (see there for the ones floe writes by)'),
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
          .describe('A table\'s key index stays in memory up to this many bytes (8 per row of a snapshotted integer key, about 34 per row an update moved or per string key); beyond, it lives in SQLite under stateDir. Either way it persists under stateDir and survives restarts and crashes. The row and foreign-key indexes of keyless tables and cascade children (together) move to SQLite under stateDir beyond it too; they are rebuilt from the lake at each start'),
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
    properties: z
      .record(z.string(), z.string())
      .default({})
      .describe(
        "Table properties of the tables floe creates. floe writes by Java's: write.parquet.compression-codec (default zstd; also snappy, gzip or uncompressed: the codecs every engine reads) and write.delete.parquet.compression-codec (default: the data files'), write.target-file-size-bytes (default 128 MiB), write.delete.target-file-size-bytes (64 MiB), write.data.path. They are read from the table's metadata: one that another engine sets later applies too (from floe's next start)",
      ),
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
      .describe('Local state of floe run: the key indexes, persisted as they change (<stateDir>/<job id>/<table uuid>.keyindex and .keyindex.log; on disk beyond the memory bound, ….keyindex.sqlite; row and foreign-key indexes beyond it, ….valueindex.sqlite, while floe runs), a cache of the lake that may be deleted at any time (`--state-dir` overrides)'),
    commit: z
      .object({
        intervalMs: z.number().int().min(100).default(10_000).describe('Checkpoint this many milliseconds after the checkpoint before started (at a transaction boundary; at once after it when its commit took longer): a change is committed at most this long after the checkpoint before it, also when no event follows it'),
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
          .default(4096)
          .describe('Checkpoint early when the buffered changes have opened this many data files (a partitioned table opens one per partition its rows touch): bounds how long one commit takes, so that a snapshot over many partitions lands progress between restarts. Snapshot chunks are committed whole, so one chunk may open more (at most its rows). A bound below the partitions one chunk touches makes every chunk a commit of its own files: a day-partitioned snapshot of 2M rows over 1,826 days at 512 wrote about 1,800 files per 8,096-row chunk'),
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
          .describe('Also checkpoint as soon as the binlog stream goes quiet (floe idle 25 ms waiting for the next event) after at least intervalMs of changes without a pause, or after the changes a run starts streaming with: a backlog drained is committed at once, not up to an interval later (at most one such checkpoint per interval of changes; never during a snapshot)'),
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
