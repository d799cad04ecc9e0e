/**
 * The storage settings `floe catalog serve` hands its clients, so that PyIceberg, Spark and Iceberg
 * Java (S3FileIO), DuckDB and floe's own client attach with the catalog URI alone, as REST catalogs
 * (Polaris, Lakekeeper) do:
 * - `GET /v1/config` `defaults` and every LoadTableResult `config`: `s3.endpoint` (the advertised
 *   endpoint when clients reach the store by another address than floe does, e.g.
 *   `http://localhost:9000` outside a Docker network), `s3.path-style-access`, `client.region` and
 *   `s3.region` — nothing secret;
 * - credentials (`s3.access-key-id`, `s3.secret-access-key`, `s3.session-token`, in `config` and in
 *   `storage-credentials`) only when the operator turned vending on (`--vend-credentials`) AND the
 *   request asks for them with `X-Iceberg-Access-Delegation: vended-credentials` (REST spec,
 *   loadTable): off by default, because anyone who can load a table would receive floe's own keys.
 *   PyIceberg, DuckDB and floe's client send that header by default; Spark and Iceberg Java send it
 *   when configured with `header.X-Iceberg-Access-Delegation=vended-credentials`; Trino only with
 *   `iceberg.rest-catalog.vended-credentials-enabled=true` (otherwise it uses its own `s3.*` settings).
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
  /** Hand out floe's S3 credentials to clients that ask for them when loading a table. Default false. */
  vendCredentials?: boolean;
}

export interface ServedTableAccess {
  config: Record<string, string>;
  storageCredentials: StorageCredential[];
}

/** The REST spec's access-delegation header, a comma-separated list of mechanisms the client accepts. */
export const ACCESS_DELEGATION_HEADER = 'x-iceberg-access-delegation';

/** Whether a request's X-Iceberg-Access-Delegation header asks for vended credentials. */
export function asksForVendedCredentials(header: string | string[] | undefined): boolean {
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  return values.some((v) => v.split(',').some((m) => m.trim().toLowerCase() === 'vended-credentials'));
}

/** The non-secret S3 settings of a warehouse on S3 (empty elsewhere). */
export function storageDefaults(warehouse: string, options: TableConfigOptions): Record<string, string> {
  if (!isS3Uri(warehouse)) return {};
  const s3 = options.s3 ?? {};
  const config: Record<string, string> = {};
  const endpoint = options.advertisedS3Endpoint ?? s3.endpoint;
  if (endpoint !== undefined) config[S3_PROPERTY.endpoint] = endpoint;
  if (s3.forcePathStyle !== undefined) config[S3_PROPERTY.pathStyle] = String(s3.forcePathStyle);
  if (s3.region !== undefined) {
    config[S3_PROPERTY.clientRegion] = s3.region;
    config[S3_PROPERTY.region] = s3.region;
  }
  return config;
}

/** `asked`: the request carries `X-Iceberg-Access-Delegation: vended-credentials`. */
export function tableAccessFor(location: string, options: TableConfigOptions, asked: boolean): ServedTableAccess {
  if (!isS3Uri(location)) return { config: {}, storageCredentials: [] };
  const s3 = options.s3 ?? {};
  const config = storageDefaults(location, options);
  const storageCredentials: StorageCredential[] = [];
  if (asked && options.vendCredentials && s3.accessKeyId !== undefined && s3.secretAccessKey !== undefined) {
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
