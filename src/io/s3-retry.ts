/**
 * floe's retry policy for S3 requests: the SDK's standard mode without its client-wide retry quota, and
 * the same backoff for reading a response body, which the SDK does not retry.
 *
 * - Which errors: those the SDK classifies TRANSIENT (5xx 500/502/503/504, ECONNRESET, EPIPE,
 *   ETIMEDOUT, timeouts) or THROTTLING (SlowDown, 429, …) — the SDK's own classification, passed in
 *   `errorInfo.errorType` (@smithy/core retry `isTransientError`, `isThrottlingError`).
 * - Backoff: "full jitter" exponential backoff, random(0, min(20 s, base · 2^retry)), base 100 ms and
 *   500 ms for throttling — the SDK standard mode's constants (AWS SDKs and Tools Reference Guide,
 *   "Retry behavior"; @smithy/core `DEFAULT_RETRY_DELAY_BASE`, `THROTTLING_RETRY_DELAY_BASE`,
 *   `MAXIMUM_RETRY_DELAY`), honouring a Retry-After hint within 5 s as the SDK does.
 * - No retry quota. Standard mode also keeps one bucket of 500 "retry tokens" per client (5 per retry,
 *   10 per timeout retry, refunded only by successes) and stops retrying altogether once it is empty.
 *   That protects a fleet from retry storms, but floe is one long-lived process with one client: a burst
 *   of SlowDown or resets drained the bucket in a fault test (about 100 retries) and from then on the
 *   first transient error of any request failed the pipeline. Per-request attempts and backoff bound
 *   floe's load on a struggling store instead.
 * - Stalls: a connection that goes silent without closing fails after `socketTimeoutMs` of inactivity
 *   (the SDK's Node handler has no timeout by default, so a stalled S3 connection used to hang floe for
 *   as long as the operating system kept the socket) and is retried like a reset.
 * - Response bodies: GetObject resolves once the headers arrive; a connection reset while the body
 *   streams surfaces from `transformToByteArray`, outside the SDK's retry loop. `retryBodyRead` gives
 *   that read the same attempts and backoff.
 */
import type { S3ClientConfig } from '@aws-sdk/client-s3';

type RetryStrategyV2 = Extract<NonNullable<S3ClientConfig['retryStrategy']>, { refreshRetryTokenForRetry: unknown }>;
type RetryToken = Awaited<ReturnType<RetryStrategyV2['acquireInitialRetryToken']>>;
type RetryErrorInfo = Parameters<RetryStrategyV2['refreshRetryTokenForRetry']>[1];

const BASE_DELAY_MS = 100;
const THROTTLING_BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 20_000;

/** Full-jitter exponential backoff before retry number `retry` (0 = the first retry). */
export function backoffDelayMs(retry: number, throttled = false, random: () => number = Math.random): number {
  const base = throttled ? THROTTLING_BASE_DELAY_MS : BASE_DELAY_MS;
  return Math.floor(random() * Math.min(MAX_DELAY_MS, base * 2 ** retry));
}

function token(retryCount: number): RetryToken {
  return { getRetryCount: () => retryCount, getRetryDelay: () => 0 };
}

/** The SDK retry strategy floe's S3 clients use (see the module comment). */
export function floeS3RetryStrategy(maxAttempts: number): RetryStrategyV2 {
  return {
    acquireInitialRetryToken: async () => token(0),
    async refreshRetryTokenForRetry(previous: RetryToken, info: RetryErrorInfo): Promise<RetryToken> {
      const retry = previous.getRetryCount();
      const retryable = info.errorType === 'TRANSIENT' || info.errorType === 'THROTTLING';
      if (!retryable || retry + 1 >= maxAttempts) throw new Error('no retry: not a transient error, or no attempts left');
      let delay = backoffDelayMs(retry, info.errorType === 'THROTTLING');
      if (info.retryAfterHint instanceof Date) delay = Math.max(delay, Math.min(info.retryAfterHint.getTime() - Date.now(), delay + 5_000));
      await sleep(delay);
      return token(retry + 1);
    },
    recordSuccess: () => undefined,
  };
}

/** Errors of a response body stream that a new request can cure (the connection broke mid-body). */
export function isBrokenBody(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const { code, message, name } = e as { code?: unknown; message?: unknown; name?: unknown };
  if (name === 'AbortError') return false;
  // The request handler's socket timeout (S3Config.socketTimeoutMs) ends a body that stopped flowing.
  if (name === 'TimeoutError') return true;
  if (typeof code === 'string' && ['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ERR_STREAM_PREMATURE_CLOSE', 'UND_ERR_SOCKET'].includes(code)) return true;
  return typeof message === 'string' && /^(aborted|socket hang up|premature close)$/i.test(message);
}

/**
 * Runs `read` (a GetObject and its body) up to `maxAttempts` times while the body breaks off, with the
 * backoff above. Other errors (and the SDK's own exhausted retries) go to the caller at once.
 */
export async function retryBodyRead<T>(maxAttempts: number, read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (e) {
      if (!isBrokenBody(e) || attempt >= maxAttempts) throw e;
      await sleep(backoffDelayMs(attempt - 1));
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
