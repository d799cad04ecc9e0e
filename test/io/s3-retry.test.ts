/**
 * floe's S3 retry policy (src/io/s3-retry.ts) in isolation: the backoff bounds (the SDK standard mode's
 * constants), which errors count as a broken response body, and the retry strategy's refusals. Its
 * behaviour against a real server is test/io/s3-faults.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import { backoffDelayMs, floeS3RetryStrategy, isBrokenBody, retryBodyRead } from '../../src/io/s3-retry.js';

describe('S3 retry policy', () => {
  it('full-jitter backoff: random(0, min(20 s, base · 2^retry)), base 100 ms, 500 ms when throttled', () => {
    expect(backoffDelayMs(0, false, () => 0)).toBe(0);
    expect(backoffDelayMs(0, false, () => 0.999)).toBe(99);
    expect(backoffDelayMs(3, false, () => 0.5)).toBe(400);
    expect(backoffDelayMs(0, true, () => 0.999)).toBe(499);
    expect(backoffDelayMs(30, false, () => 0.999)).toBe(19_980);
  });

  it('a broken body: resets, premature close, "aborted", socket timeouts — not a caller abort', () => {
    expect(isBrokenBody(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isBrokenBody(new Error('aborted'))).toBe(true);
    expect(isBrokenBody(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }))).toBe(true);
    expect(isBrokenBody(Object.assign(new Error('socket timed out'), { name: 'TimeoutError' }))).toBe(true);
    expect(isBrokenBody(Object.assign(new Error('aborted'), { name: 'AbortError' }))).toBe(false);
    expect(isBrokenBody(new Error('NoSuchKey'))).toBe(false);
    expect(isBrokenBody('aborted')).toBe(false);
  });

  it('retryBodyRead retries a broken body up to maxAttempts, and nothing else', async () => {
    // how many times retryBodyRead calls a read that always fails with `message`, and that it rethrows it
    const callsUntilRethrown = async (message: string): Promise<number> => {
      let calls = 0;
      await expect(retryBodyRead(3, async () => {
        calls++;
        throw new Error(message);
      })).rejects.toThrow(message);
      return calls;
    };
    expect(await callsUntilRethrown('aborted')).toBe(3);
    expect(await callsUntilRethrown('AccessDenied')).toBe(1);
    let calls = 0;
    expect(await retryBodyRead(3, async () => (++calls < 2 ? Promise.reject(new Error('aborted')) : 'ok'))).toBe('ok');
  });

  it('the SDK strategy retries transient and throttling errors up to maxAttempts, never client errors', async () => {
    const strategy = floeS3RetryStrategy(2);
    const first = await strategy.acquireInitialRetryToken('s3');
    const second = await strategy.refreshRetryTokenForRetry(first, { errorType: 'TRANSIENT' });
    expect(second.getRetryCount()).toBe(1);
    await expect(strategy.refreshRetryTokenForRetry(second, { errorType: 'TRANSIENT' })).rejects.toThrow();
    await expect(strategy.refreshRetryTokenForRetry(first, { errorType: 'CLIENT_ERROR' })).rejects.toThrow();
    await expect(strategy.refreshRetryTokenForRetry(first, { errorType: 'SERVER_ERROR' })).rejects.toThrow();
    expect((await strategy.refreshRetryTokenForRetry(first, { errorType: 'THROTTLING' })).getRetryCount()).toBe(1);
  });
});
