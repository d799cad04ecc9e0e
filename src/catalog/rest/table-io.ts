/**
 * The FileIO of a table loaded through a REST catalog. Settings are layered as Java's
 * RESTSessionCatalog layers them (later wins): floe's own storage config (warehouse.s3), the
 * catalog-level properties from /v1/config (defaults, then overrides), the table's `config` from its
 * LoadTableResult, and finally the `storage-credentials` entry whose prefix is the longest match of
 * the table location (the spec: clients check storage-credentials before config).
 *
 * Keys understood (Iceberg's S3FileIO / PyIceberg names): `s3.endpoint`, `s3.path-style-access`,
 * `s3.access-key-id`, `s3.secret-access-key`, `s3.session-token`, `client.region` / `s3.region`.
 * FileIOs are cached per distinct setting, and closed with the catalog.
 */
import type { FileIO } from '../../io/file-io.js';
import { fileIOFor, type StorageConfig } from '../../io/file-io-factory.js';
import type { S3Config } from '../../io/s3-file-io.js';
import type { StorageCredential } from './rest-json.js';

export const S3_PROPERTY = {
  endpoint: 's3.endpoint',
  pathStyle: 's3.path-style-access',
  accessKeyId: 's3.access-key-id',
  secretAccessKey: 's3.secret-access-key',
  sessionToken: 's3.session-token',
  region: 's3.region',
  clientRegion: 'client.region',
} as const;

/** S3 settings from catalog/table properties, over `base`. */
function s3ConfigFromProperties(base: S3Config | undefined, properties: Record<string, string>): S3Config {
  const out: S3Config = { ...(base ?? {}) };
  const p = properties;
  if (p[S3_PROPERTY.endpoint]) out.endpoint = p[S3_PROPERTY.endpoint];
  if (p[S3_PROPERTY.pathStyle] !== undefined) out.forcePathStyle = p[S3_PROPERTY.pathStyle]!.toLowerCase() === 'true';
  const region = p[S3_PROPERTY.clientRegion] ?? p[S3_PROPERTY.region];
  if (region) out.region = region;
  if (p[S3_PROPERTY.accessKeyId] && p[S3_PROPERTY.secretAccessKey]) {
    out.accessKeyId = p[S3_PROPERTY.accessKeyId];
    out.secretAccessKey = p[S3_PROPERTY.secretAccessKey];
    if (p[S3_PROPERTY.sessionToken]) out.sessionToken = p[S3_PROPERTY.sessionToken];
    else delete out.sessionToken;
  }
  return out;
}

/** The storage credential with the longest prefix of `location`, if any. */
function credentialFor(location: string, credentials: readonly StorageCredential[]): StorageCredential | undefined {
  let best: StorageCredential | undefined;
  for (const c of credentials) {
    if (location.startsWith(c.prefix) && (best === undefined || c.prefix.length > best.prefix.length)) best = c;
  }
  return best;
}

export class TableIOCache {
  private readonly cache = new Map<string, FileIO>();

  constructor(
    private readonly storage: StorageConfig,
    private readonly catalogProperties: Record<string, string>,
  ) {}

  ioFor(location: string, tableConfig: Record<string, string> = {}, credentials: readonly StorageCredential[] = []): FileIO {
    const credential = credentialFor(location, credentials);
    const properties = { ...this.catalogProperties, ...tableConfig, ...(credential?.config ?? {}) };
    const s3 = s3ConfigFromProperties(this.storage.s3, properties);
    const key = location.startsWith('s3') ? `s3 ${JSON.stringify(s3)}` : 'local';
    let io = this.cache.get(key);
    if (io === undefined) {
      io = fileIOFor(location, { ...this.storage, s3 });
      this.cache.set(key, io);
    }
    return io;
  }

  async close(): Promise<void> {
    for (const io of this.cache.values()) await io.close?.();
    this.cache.clear();
  }
}
