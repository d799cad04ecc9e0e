/**
 * Translation of AWS SDK errors into FloeErrors. Transient failures (throttling, 5xx, resets,
 * timeouts, broken response bodies) have already been retried with exponential backoff and jitter
 * (s3-retry.ts) by the time an error reaches here.
 *
 * Credentials never leave this module: messages are built from the error's code, message, status and
 * request id, then scrubbed of every configured secret; the SDK error itself is not attached as the
 * cause (its `$response` and request objects are not ours to vet).
 */
import { FloeError, type ErrorKind } from '../util/errors.js';
import { isBrokenBody } from './s3-retry.js';

const SUBSYSTEM = 'io.s3';

interface SdkErrorShape {
  name?: string;
  Code?: string;
  message?: string;
  $fault?: 'client' | 'server';
  $retryable?: unknown;
  $metadata?: { httpStatusCode?: number; requestId?: string; attempts?: number };
}

function sdkError(e: unknown): SdkErrorShape {
  return typeof e === 'object' && e !== null ? (e as SdkErrorShape) : { message: String(e) };
}

export function httpStatusOf(e: unknown): number | undefined {
  return sdkError(e).$metadata?.httpStatusCode;
}

export function errorCodeOf(e: unknown): string | undefined {
  const s = sdkError(e);
  return s.Code ?? s.name;
}

/** Attempts the SDK made for the failed request (1 when it did not retry). */
export function attemptsOf(e: unknown): number {
  return sdkError(e).$metadata?.attempts ?? 1;
}

export function isNotFound(e: unknown): boolean {
  const code = errorCodeOf(e);
  return httpStatusOf(e) === 404 || code === 'NoSuchKey' || code === 'NotFound';
}

export function isPreconditionFailed(e: unknown): boolean {
  return httpStatusOf(e) === 412 || errorCodeOf(e) === 'PreconditionFailed';
}

export class SecretScrubber {
  private readonly secrets: string[];

  constructor(secrets: Array<string | undefined>) {
    // Short strings would scrub ordinary words; real keys are 16+ characters.
    this.secrets = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 4);
  }

  scrub(text: string): string {
    let out = text;
    for (const s of this.secrets) out = out.split(s).join('[redacted]');
    return out;
  }
}

/** A FloeError for a failed S3 call on `location` (an s3:// URI or a bucket). */
export function s3Error(action: string, location: string, e: unknown, scrubber: SecretScrubber): FloeError {
  if (e instanceof FloeError) return e;
  const s = sdkError(e);
  const status = s.$metadata?.httpStatusCode;
  const code = errorCodeOf(e) ?? 'Error';
  const requestId = s.$metadata?.requestId;
  const detail = scrubber.scrub(`${code}: ${s.message ?? 'no message'}${status ? ` (HTTP ${status}${requestId ? `, request id ${requestId}` : ''})` : ''}`);
  let kind: ErrorKind = 'io';
  let hint = '';
  if (code === 'NoSuchBucket') {
    kind = 'not-found';
    hint = '; create the bucket or fix the warehouse location';
  } else if (isNotFound(e)) {
    kind = 'not-found';
  } else if (status === 403 || code === 'AccessDenied' || code === 'InvalidAccessKeyId' || code === 'SignatureDoesNotMatch') {
    kind = 'config';
    hint = '; check the S3 credentials (s3 accessKeyId / secretAccessKey in the config, or the AWS default chain: environment, shared files, instance role) and the bucket policy';
  } else if (code === 'CredentialsProviderError' || /Could not load credentials/i.test(s.message ?? '')) {
    kind = 'config';
    hint = '; no AWS credentials were found: set s3 accessKeyId / secretAccessKey in the config or configure the AWS default chain (AWS_ACCESS_KEY_ID, ~/.aws/credentials, instance role)';
  } else if (/Region is missing/i.test(s.message ?? '')) {
    kind = 'config';
    hint = '; set s3.region in the config or AWS_REGION in the environment';
  } else if (code === 'ECONNREFUSED' || /ECONNREFUSED/.test(s.message ?? '')) {
    hint = '; is the S3 endpoint running and reachable?';
  }
  // A body that broke off (reset, timeout) carries no SDK metadata, yet is as transient as a 503.
  const retryable = kind === 'io' && (s.$retryable !== undefined || s.$fault === 'server' || (status !== undefined && status >= 500) || isBrokenBody(e));
  const context: Record<string, string> = { location, code };
  if (status !== undefined) context.httpStatus = String(status);
  if (requestId !== undefined) context.requestId = requestId;
  return new FloeError(SUBSYSTEM, kind, `cannot ${action} ${location}: ${detail}${hint}`, {
    retryable,
    context,
    cause: new Error(detail),
  });
}
