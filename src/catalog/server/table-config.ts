/**
 * The `config` (and `storage-credentials`) a served LoadTableResult carries, so that PyIceberg, Spark
 * (S3FileIO), DuckDB and floe's own client can read the table's files without other settings:
 * `s3.endpoint` (the advertised endpoint when clients reach the store by another address than floe
 * does, e.g. `http://localhost:9000` outside a Docker network), `s3.path-style-access`,
 * `client.region` and `s3.region`. Credentials (`s3.access-key-id`, `s3.secret-access-key`,
 * `s3.session-token`) are only vended when the operator turns vending on: off by default, because
 * anyone who can load a table would receive them.
 *
 * Trino ignores this config for storage (it uses its own `fs.native-s3` / `s3.*` catalog settings)
 * unless `iceberg.rest-catalog.vended-credentials-enabled=true`.
 */
import type { S3Config } from '../../io/s3-file-io.js';
import { isS3Uri } from '../../io/s3-location.js';
import type { StorageCredential } from '../rest/rest-json.js';
import { S3_PROPERTY } from '../rest/table-io.js';

export interface TableConfigOptions {
  /** The S3 settings floe itself uses (warehouse.s3). */
  s3?: S3Config;
  /** The endpoint clients should use, when it differs from floe's. */
  advertisedS3Endpoint?: string;
  /** Hand out floe's S3 credentials to every client that loads a table. Default false. */
  vendCredentials?: boolean;
}

export interface ServedTableAccess {
  config: Record<string, string>;
  storageCredentials: StorageCredential[];
}

export function tableAccessFor(location: string, options: TableConfigOptions): ServedTableAccess {
  if (!isS3Uri(location)) return { config: {}, storageCredentials: [] };
  const s3 = options.s3 ?? {};
  const config: Record<string, string> = {};
  const endpoint = options.advertisedS3Endpoint ?? s3.endpoint;
  if (endpoint !== undefined) config[S3_PROPERTY.endpoint] = endpoint;
  if (s3.forcePathStyle !== undefined) config[S3_PROPERTY.pathStyle] = String(s3.forcePathStyle);
  if (s3.region !== undefined) {
    config[S3_PROPERTY.clientRegion] = s3.region;
    config[S3_PROPERTY.region] = s3.region;
  }
  const storageCredentials: StorageCredential[] = [];
  if (options.vendCredentials && s3.accessKeyId !== undefined && s3.secretAccessKey !== undefined) {
    const credentials: Record<string, string> = {
      [S3_PROPERTY.accessKeyId]: s3.accessKeyId,
      [S3_PROPERTY.secretAccessKey]: s3.secretAccessKey,
    };
    if (s3.sessionToken !== undefined) credentials[S3_PROPERTY.sessionToken] = s3.sessionToken;
    Object.assign(config, credentials);
    storageCredentials.push({ prefix: location.replace(/\/+$/, ''), config: { ...credentials } });
  }
  return { config, storageCredentials };
}
