/**
 * `source:` of floe's configuration: the MySQL server, its TLS, the tables captured, where the
 * binlog is read from, and how the snapshot and the reconnects behave (validated with zod; part of
 * the JSON Schema `npm run gen:config-schema` writes).
 */
import { z } from 'zod';
import { isPemText } from '../util/pem.js';
import { mysqlUrl } from './url-settings.js';

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
