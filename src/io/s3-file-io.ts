/**
 * FileIO on S3 and S3-compatible stores (MinIO, Ceph, R2, s3rver) through `@aws-sdk/client-s3`.
 * Locations are `s3://bucket/key`; one instance may touch several buckets.
 *
 * - Credentials come from the config or, when absent, from the SDK's default chain (environment,
 *   shared config files, SSO, container and instance roles). They never appear in errors or logs
 *   (s3-errors.ts).
 * - Transient failures (5xx, throttling, resets, timeouts) are retried with exponential backoff and
 *   jitter (`maxAttempts`, default 3), also when a response body breaks off, and without the SDK's
 *   client-wide retry quota (s3-retry.ts says why).
 * - Objects from `multipartThresholdBytes` up are uploaded in parts (`@aws-sdk/lib-storage`).
 * - `writeIfAbsent` is a PutObject with `If-None-Match: *` (AWS S3 since 2024-08, MinIO, Ceph);
 *   412 Precondition Failed means the object exists. Servers that ignore the header overwrite
 *   silently, so `supportsAtomicCreate` probes each bucket once (s3-atomic-create-probe.ts).
 */
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { FloeError } from '../util/errors.js';
import { checkByteRange } from './byte-range.js';
import type { DirectoryListing, FileIO, ListedObject } from './file-io.js';
import { probeAtomicCreate } from './s3-atomic-create-probe.js';
import { floeS3RetryStrategy, retryBodyRead } from './s3-retry.js';
import {
  attemptsOf,
  errorCodeOf,
  isNotFound,
  isPreconditionFailed,
  s3Error,
  SecretScrubber,
} from './s3-errors.js';
import { directoryPrefix, formatS3Uri, parseS3Uri } from './s3-location.js';

export interface S3Config {
  /** Custom endpoint (MinIO, s3rver, …), e.g. `http://localhost:9000`. Absent for AWS S3. */
  endpoint?: string;
  /** Default: the SDK chain (AWS_REGION, shared config); `us-east-1` when an endpoint is set. */
  region?: string;
  /** Path-style addressing (`endpoint/bucket/key`), which MinIO and s3rver need. */
  forcePathStyle?: boolean;
  /** Static credentials; when absent, the AWS default credential chain is used. */
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  /** Attempts per request including retries of transient failures (SDK standard mode). Default 3. */
  maxAttempts?: number;
  /**
   * A request fails (and is retried) after this long without any bytes moving on its connection, while
   * sending, waiting or receiving. Default 60 s; 0 disables it (the SDK's default: wait forever).
   */
  socketTimeoutMs?: number;
  /** Connecting to the endpoint fails (and is retried) after this long. Default 10 s. */
  connectionTimeoutMs?: number;
  /** Objects of at least this many bytes are uploaded in parts. Default 32 MiB. */
  multipartThresholdBytes?: number;
  /** Part size of multipart uploads, at least 5 MiB (S3's minimum). Default 8 MiB. */
  multipartPartSizeBytes?: number;
  /** Parts uploaded in parallel. Default 4. */
  multipartConcurrency?: number;
  /** MaxKeys per ListObjectsV2 page (1..1000). Default 1000. */
  listPageSize?: number;
  /**
   * Where `supportsAtomicCreate()` without a location probes (an s3:// URI, usually the warehouse
   * root). `fileIOFor` sets it to the location it was asked for.
   */
  probeLocation?: string;
}

const MIB = 1024 * 1024;
const S3_MIN_PART_SIZE = 5 * MIB;
const MAX_CONDITIONAL_CONFLICT_RETRIES = 5;

export class S3FileIO implements FileIO {
  readonly client: S3Client;
  private readonly scrubber: SecretScrubber;
  private readonly multipartThreshold: number;
  private readonly partSize: number;
  private readonly concurrency: number;
  private readonly pageSize: number;
  private readonly probeLocation: string | undefined;
  private readonly maxAttempts: number;
  private readonly atomicCreateByBucket = new Map<string, Promise<boolean>>();

  constructor(config: S3Config = {}) {
    if ((config.accessKeyId === undefined) !== (config.secretAccessKey === undefined)) {
      throw new FloeError('io.s3', 'config', 'expected both s3 accessKeyId and secretAccessKey, or neither (to use the AWS default credential chain); found only one of them');
    }
    this.partSize = config.multipartPartSizeBytes ?? 8 * MIB;
    if (this.partSize < S3_MIN_PART_SIZE) {
      throw new FloeError('io.s3', 'config', `expected multipartPartSizeBytes >= ${S3_MIN_PART_SIZE} (S3's minimum part size), found ${this.partSize}`);
    }
    this.multipartThreshold = Math.max(config.multipartThresholdBytes ?? 32 * MIB, this.partSize);
    this.concurrency = config.multipartConcurrency ?? 4;
    this.pageSize = config.listPageSize ?? 1000;
    if (!Number.isInteger(this.pageSize) || this.pageSize < 1 || this.pageSize > 1000) {
      throw new FloeError('io.s3', 'config', `expected listPageSize between 1 and 1000, found ${this.pageSize}`);
    }
    this.probeLocation = config.probeLocation;
    this.scrubber = new SecretScrubber([config.secretAccessKey, config.sessionToken, config.accessKeyId]);

    this.maxAttempts = Math.max(1, config.maxAttempts ?? 3);
    const clientConfig: S3ClientConfig = {
      forcePathStyle: config.forcePathStyle ?? false,
      retryStrategy: floeS3RetryStrategy(this.maxAttempts),
      // NodeHttpHandler options (@smithy/node-http-handler): its defaults have no timeouts at all.
      requestHandler: { socketTimeout: config.socketTimeoutMs ?? 60_000, connectionTimeout: config.connectionTimeoutMs ?? 10_000 },
      followRegionRedirects: true,
    };
    if (config.endpoint !== undefined) {
      clientConfig.endpoint = config.endpoint;
      // S3-compatible servers vary in their support of the flexible checksums the SDK sends by
      // default since 2025 (aws-chunked trailers); send checksums only where S3 requires them.
      clientConfig.requestChecksumCalculation = 'WHEN_REQUIRED';
      clientConfig.responseChecksumValidation = 'WHEN_REQUIRED';
    }
    const region = config.region ?? (config.endpoint !== undefined && !process.env.AWS_REGION && !process.env.AWS_DEFAULT_REGION ? 'us-east-1' : undefined);
    if (region !== undefined) clientConfig.region = region;
    if (config.accessKeyId !== undefined && config.secretAccessKey !== undefined) {
      clientConfig.credentials = {
        accessKeyId: config.accessKeyId,
        secretAccessKey: config.secretAccessKey,
        ...(config.sessionToken !== undefined ? { sessionToken: config.sessionToken } : {}),
      };
    }
    this.client = new S3Client(clientConfig);
  }

  async read(location: string): Promise<Uint8Array> {
    const { bucket, key } = parseS3Uri(location);
    try {
      return await retryBodyRead(this.maxAttempts, async () => {
        const out = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return await out.Body!.transformToByteArray();
      });
    } catch (e) {
      throw this.error('read', location, e);
    }
  }

  async readRange(location: string, start: number, end: number): Promise<Uint8Array> {
    checkByteRange(location, start, end);
    if (end === start) return new Uint8Array(0);
    const { bucket, key } = parseS3Uri(location);
    let bytes: Uint8Array;
    try {
      bytes = await retryBodyRead(this.maxAttempts, async () => {
        const out = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${start}-${end - 1}` }));
        return await out.Body!.transformToByteArray();
      });
    } catch (e) {
      if (errorCodeOf(e) === 'InvalidRange') {
        throw new FloeError('io.s3', 'invalid-argument', `range [${start}, ${end}) of ${location} starts past the end of the object`);
      }
      throw this.error('read', location, e);
    }
    if (bytes.length !== end - start) {
      throw new FloeError('io.s3', 'invalid-argument', `range [${start}, ${end}) of ${location} ends past the end of the object, which has ${start + bytes.length} bytes`);
    }
    return bytes;
  }

  async size(location: string): Promise<number | undefined> {
    const { bucket, key } = parseS3Uri(location);
    if (key === '' || key.endsWith('/')) return undefined;
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return out.ContentLength ?? 0;
    } catch (e) {
      if (isNotFound(e) && errorCodeOf(e) !== 'NoSuchBucket') return undefined;
      throw this.error('stat', location, e);
    }
  }

  async exists(location: string): Promise<boolean> {
    return (await this.size(location)) !== undefined;
  }

  async write(location: string, data: Uint8Array): Promise<void> {
    const { bucket, key } = parseS3Uri(location);
    checkObjectKey(location, key);
    try {
      if (data.length >= this.multipartThreshold) {
        const upload = new Upload({
          client: this.client,
          params: { Bucket: bucket, Key: key, Body: data },
          partSize: this.partSize,
          queueSize: this.concurrency,
          leavePartsOnError: false,
        });
        await upload.done();
      } else {
        await this.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: data, ContentLength: data.length }));
      }
    } catch (e) {
      throw this.error('write', location, e);
    }
  }

  /**
   * One PutObject with `If-None-Match: *` (single request, up to 5 GiB: creates are used for metadata
   * files, never for large data). Only as atomic as the server; see `supportsAtomicCreate`.
   */
  async writeIfAbsent(location: string, data: Uint8Array): Promise<boolean> {
    const { bucket, key } = parseS3Uri(location);
    checkObjectKey(location, key);
    for (let attempt = 0; ; attempt++) {
      try {
        await this.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: data, ContentLength: data.length, IfNoneMatch: '*' }));
        return true;
      } catch (e) {
        if (isPreconditionFailed(e)) {
          // If the SDK retried, an earlier attempt may have created the object and only its response was
          // lost: the 412 is then about our own object. Its bytes tell (metadata files are unique).
          if (attemptsOf(e) > 1) return await this.holdsExactly(location, data);
          return false;
        }
        if (errorCodeOf(e) === 'ConditionalRequestConflict' && attempt < MAX_CONDITIONAL_CONFLICT_RETRIES) {
          // AWS: another conditional write on this key is in flight; retrying yields 200 or 412.
          await sleep(50 * 2 ** attempt);
          continue;
        }
        throw this.error('create', location, e);
      }
    }
  }

  async list(prefix: string): Promise<string[]> {
    const { bucket, key } = parseS3Uri(prefix);
    const out: string[] = [];
    await this.listPages(bucket, key, undefined, (page) => {
      for (const o of page.Contents ?? []) if (o.Key !== undefined) out.push(formatS3Uri(bucket, o.Key));
    }, prefix);
    return out;
  }

  async listWithTimes(prefix: string): Promise<ListedObject[]> {
    const { bucket, key } = parseS3Uri(prefix);
    const out: ListedObject[] = [];
    await this.listPages(bucket, key, undefined, (page) => {
      for (const o of page.Contents ?? []) if (o.Key !== undefined && o.LastModified !== undefined) out.push({ location: formatS3Uri(bucket, o.Key), modifiedMs: o.LastModified.getTime() });
    }, prefix);
    return out;
  }

  async listChildren(dir: string): Promise<DirectoryListing> {
    const { bucket, key } = parseS3Uri(dir);
    const prefix = directoryPrefix(key);
    const files: string[] = [];
    // A Set: some servers (s3rver) repeat a common prefix on the next page; S3 does not.
    const directories = new Set<string>();
    await this.listPages(bucket, prefix, '/', (page) => {
      for (const o of page.Contents ?? []) {
        if (o.Key !== undefined && o.Key !== prefix) files.push(formatS3Uri(bucket, o.Key));
      }
      for (const p of page.CommonPrefixes ?? []) {
        if (p.Prefix !== undefined) directories.add(formatS3Uri(bucket, p.Prefix.replace(/\/$/, '')));
      }
    }, dir);
    return { files, directories: [...directories] };
  }

  async delete(location: string): Promise<void> {
    const { bucket, key } = parseS3Uri(location);
    checkObjectKey(location, key);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    } catch (e) {
      if (isNotFound(e) && errorCodeOf(e) !== 'NoSuchBucket') return;
      throw this.error('delete', location, e);
    }
  }

  async deleteTree(dir: string): Promise<void> {
    const { bucket, key } = parseS3Uri(dir);
    const prefix = directoryPrefix(key);
    if (prefix === '') {
      throw new FloeError('io.s3', 'invalid-argument', `refusing to delete every object of bucket ${bucket} (${dir}); name a directory inside it`);
    }
    const keys: string[] = [];
    await this.listPages(bucket, prefix, undefined, (page) => {
      for (const o of page.Contents ?? []) if (o.Key !== undefined) keys.push(o.Key);
    }, dir);
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      try {
        const out = await this.client.send(new DeleteObjectsCommand({
          Bucket: bucket,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }));
        const failed = out.Errors ?? [];
        if (failed.length > 0) {
          const first = failed[0]!;
          throw new FloeError('io.s3', 'io', `cannot delete ${failed.length} objects under ${dir}; first: ${formatS3Uri(bucket, first.Key ?? '?')}: ${first.Code ?? ''} ${this.scrubber.scrub(first.Message ?? '')}`, { retryable: true });
        }
      } catch (e) {
        throw this.error('delete objects under', dir, e);
      }
    }
  }

  /**
   * Whether `If-None-Match: *` is honoured in the bucket of `location` (default: the configured
   * `probeLocation`). Probed once per bucket and cached for the life of this instance.
   */
  supportsAtomicCreate(location?: string): Promise<boolean> {
    const where = location ?? this.probeLocation;
    if (where === undefined) {
      return Promise.reject(new FloeError('io.s3', 'invalid-argument', 'cannot tell whether this S3 store supports atomic creates: no location to probe; pass the warehouse location to supportsAtomicCreate() or set probeLocation'));
    }
    const { bucket } = parseS3Uri(where);
    let answer = this.atomicCreateByBucket.get(bucket);
    if (answer === undefined) {
      answer = probeAtomicCreate(this, where);
      this.atomicCreateByBucket.set(bucket, answer);
      // A failed probe (network, permissions) is not an answer: try again next time.
      answer.catch(() => this.atomicCreateByBucket.delete(bucket));
    }
    return answer;
  }

  async close(): Promise<void> {
    this.client.destroy();
  }

  private async listPages(
    bucket: string,
    prefix: string,
    delimiter: string | undefined,
    onPage: (page: { Contents?: Array<{ Key?: string; LastModified?: Date }>; CommonPrefixes?: Array<{ Prefix?: string }> }) => void,
    location: string,
  ): Promise<void> {
    let token: string | undefined;
    do {
      try {
        const page = await this.client.send(new ListObjectsV2Command({
          Bucket: bucket,
          Prefix: prefix === '' ? undefined : prefix,
          Delimiter: delimiter,
          MaxKeys: this.pageSize,
          ContinuationToken: token,
        }));
        onPage(page);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } catch (e) {
        throw this.error('list', location, e);
      }
    } while (token !== undefined);
  }

  private async holdsExactly(location: string, data: Uint8Array): Promise<boolean> {
    const current = await this.read(location);
    return current.length === data.length && Buffer.compare(Buffer.from(current.buffer, current.byteOffset, current.length), Buffer.from(data.buffer, data.byteOffset, data.length)) === 0;
  }

  /** The FloeError for a failed SDK call (credentials scrubbed); used by this module's helpers. */
  errorFor(action: string, location: string, e: unknown): FloeError {
    return s3Error(action, location, e, this.scrubber);
  }

  private error(action: string, location: string, e: unknown): FloeError {
    return this.errorFor(action, location, e);
  }
}

function checkObjectKey(location: string, key: string): void {
  if (key === '' || key.endsWith('/')) {
    throw new FloeError('io.s3', 'invalid-argument', `expected an object location s3://bucket/key, found ${JSON.stringify(location)} (no object key)`);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
