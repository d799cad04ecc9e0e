/**
 * How long to wait between commit attempts: Java `Tasks.exponentialBackoff` with the table's
 * `commit.retry.*` properties — min-wait·2^(n−1) capped at max-wait, plus up to 10 % jitter so that
 * writers that collided do not collide again in lockstep, and no new attempt after the total timeout.
 */
import type { TableMetadata } from '../spec/table-metadata.js';
import {
  COMMIT_MAX_RETRY_WAIT_MS,
  COMMIT_MAX_RETRY_WAIT_MS_DEFAULT,
  COMMIT_MIN_RETRY_WAIT_MS,
  COMMIT_MIN_RETRY_WAIT_MS_DEFAULT,
  COMMIT_NUM_RETRIES,
  COMMIT_NUM_RETRIES_DEFAULT,
  COMMIT_TOTAL_RETRY_TIME_MS,
  COMMIT_TOTAL_RETRY_TIME_MS_DEFAULT,
  intProperty,
} from './table-properties.js';

export interface RetryPolicy {
  /** Retries after the first attempt (Java default 4, i.e. up to 5 attempts). */
  numRetries: number;
  minWaitMs: number;
  maxWaitMs: number;
  /** No retry starts after this much time since the first attempt. */
  totalTimeoutMs: number;
}

/** The table's policy, with explicit overrides taking precedence. */
export function retryPolicy(metadata: TableMetadata, overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  return {
    numRetries: Math.max(0, overrides.numRetries ?? intProperty(metadata, COMMIT_NUM_RETRIES, COMMIT_NUM_RETRIES_DEFAULT)),
    minWaitMs: Math.max(0, overrides.minWaitMs ?? intProperty(metadata, COMMIT_MIN_RETRY_WAIT_MS, COMMIT_MIN_RETRY_WAIT_MS_DEFAULT)),
    maxWaitMs: Math.max(0, overrides.maxWaitMs ?? intProperty(metadata, COMMIT_MAX_RETRY_WAIT_MS, COMMIT_MAX_RETRY_WAIT_MS_DEFAULT)),
    totalTimeoutMs: Math.max(0, overrides.totalTimeoutMs ?? intProperty(metadata, COMMIT_TOTAL_RETRY_TIME_MS, COMMIT_TOTAL_RETRY_TIME_MS_DEFAULT)),
  };
}

/** Delay before retry number `retry` (1-based). */
export function backoffDelayMs(policy: RetryPolicy, retry: number): number {
  const base = Math.min(policy.minWaitMs * 2 ** Math.max(0, retry - 1), policy.maxWaitMs);
  const jitter = Math.floor(Math.random() * Math.max(1, Math.floor(base * 0.1)));
  return base + jitter;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
