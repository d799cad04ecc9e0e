/**
 * The one commit loop of floe (spec "Optimistic Concurrency"; docs/iceberg-writer-checklist.md §6.1;
 * Java `SnapshotProducer.commit` + `Tasks` retries, pyiceberg `_refresh_for_retry`). Every change floe
 * makes to a table's metadata goes through it: snapshots (snapshot-producer.ts, the checkpoint
 * commits among them), schema and spec updates (table-updates.ts) and snapshot expiry
 * (maintenance/expire-snapshots.ts). It is also the one place an unknown outcome is resolved.
 *
 * One attempt = plan the change on the table as it is now (updates + requirements, or 'skip'), then
 * swap the catalog's metadata pointer. Then:
 * - a definite refusal that is retryable ('commit-conflict' marked so): back off (commit-retry.ts),
 *   reload, plan again;
 * - any answer that is not definite (a 'commit-state-unknown', a storage or network failure, a
 *   crash-like throw right after the swap): the outcome is unknown — back off, reload, and first ask
 *   `landed(metadata)` whether the change is in the table; if not, plan again. Once an outcome was
 *   unknown, nothing the commit wrote may be deleted (`discard` is never called again);
 * - anything else (a non-retryable refusal, retries exhausted): fail — after an unknown outcome only
 *   after one last look.
 *
 * The messages name what is committed (`subject`), and the error a caller raises when the loop gives
 * up is its own (`gaveUp`), in its own words.
 */
import { errorMessage, FloeError, isFloeError } from '../../util/errors.js';
import type { MetadataUpdate, TableRequirement } from '../metadata/metadata-updates.js';
import type { TableMetadata } from '../spec/table-metadata.js';
import { catalogTable, reloadTable, type CatalogTable } from './catalog-table.js';
import { backoffDelayMs, retryPolicy, sleep, type RetryPolicy } from './commit-retry.js';

const SUBSYSTEM = 'iceberg.commit';

/** Catalog errors that guarantee the commit did not land (thrown before the pointer swap). */
const DEFINITE_REFUSALS = new Set<string>(['commit-conflict', 'invalid-argument', 'unsupported']);

/** One attempt's change, planned on the table as it is now. */
export interface CommitPlan {
  requirements: TableRequirement[];
  updates: MetadataUpdate[];
}

export interface CommitProtocol<P extends CommitPlan> {
  /** What is committed, for messages: e.g. `snapshot 123`, `a metadata change to orders`. */
  subject: string;
  /**
   * The change on `current` (reloaded after every failed attempt), or 'skip' when there is nothing
   * (more) to commit. `attempt` counts from 1. May throw to end the commit (e.g. a non-retryable
   * conflict the plan itself detects).
   */
  plan: (current: CatalogTable, attempt: number) => P | 'skip' | Promise<P | 'skip'>;
  /** After an unknown outcome: whether `metadata` already shows the change. */
  landed: (metadata: TableMetadata) => boolean;
  /** Overrides of the table's `commit.retry.*` properties. */
  retry?: Partial<RetryPolicy>;
  /** Right before each swap, and right after a swap the catalog confirmed (failpoints). */
  beforeSwap?: () => Promise<void>;
  afterSwap?: () => Promise<void>;
  /**
   * The error when the loop stops without the change: the last failure was retryable but retries or
   * time ran out, or (`unknown`) an attempt's outcome was unknown and the last look did not find the
   * change. Any other failure is thrown as it is.
   */
  gaveUp: (failure: FloeError, attempts: number, policy: RetryPolicy, unknown: boolean) => FloeError;
  /**
   * The commit ends without landing and no attempt's outcome was unknown (a failure, or 'skip' after
   * a reload): what the commit wrote for itself can go. Never called once an outcome was unknown.
   */
  discard?: () => Promise<void>;
}

export type CommitLoopResult<P extends CommitPlan> =
  /** The swap of `plan` succeeded (`table` is what the catalog returned). */
  | { status: 'committed'; table: CatalogTable; plan: P; attempts: number; uncertain: boolean }
  /** An unknown outcome, resolved by a reload that shows the change (`table`). */
  | { status: 'found'; table: CatalogTable; attempts: number; uncertain: true }
  /** `plan` said 'skip' (`table`: the table it was asked on). */
  | { status: 'skipped'; table: CatalogTable; attempts: number; uncertain: boolean };

/**
 * Reloads the table and asks `landed` whether it shows a commit whose outcome was unknown: the table
 * when it does, undefined when it does not (yet — an unknown attempt may still land).
 */
async function resolveUnknownOutcome(table: CatalogTable, landed: (metadata: TableMetadata) => boolean): Promise<CatalogTable | undefined> {
  const now = await reloadTable(table);
  return landed(now.metadata) ? now : undefined;
}

/** Plans and commits with retries (see the module header). */
export async function commitWithRetry<P extends CommitPlan>(table: CatalogTable, protocol: CommitProtocol<P>): Promise<CommitLoopResult<P>> {
  const policy = retryPolicy(table.metadata, protocol.retry);
  const started = Date.now();
  let current = table;
  let attempts = 0;
  let uncertain = false;
  const discard = async (): Promise<void> => {
    if (!uncertain) await protocol.discard?.();
  };
  try {
    for (;;) {
      const planned = await protocol.plan(current, attempts + 1);
      if (planned === 'skip') {
        await discard();
        return { status: 'skipped', table: current, attempts, uncertain };
      }
      attempts++;
      let failure: FloeError;
      let swapped = false;
      await protocol.beforeSwap?.();
      try {
        const loaded = await current.catalog.commitTable(current.identifier, planned.requirements, planned.updates);
        swapped = true;
        // Inside the try on purpose: a crash-like throw here is an unknown outcome (reload and look), so
        // what the landed commit wrote is never cleaned up as if it had failed.
        await protocol.afterSwap?.();
        return { status: 'committed', table: catalogTable(current.catalog, loaded), plan: planned, attempts, uncertain };
      } catch (e) {
        // Only a definite refusal proves that nothing landed: a conflict, or a request the catalog
        // rejects before writing anything (invalid / unsupported). Everything else — storage or
        // network errors, a crash-like throw right after the pointer swap, a bug — may have landed,
        // so it counts as an unknown outcome: files kept, reload and look, never deleted.
        // Once the catalog answered, the commit landed whatever fails after it: never a refusal.
        if (swapped) failure = new FloeError(SUBSYSTEM, 'commit-state-unknown', `${protocol.subject} was committed, then ${errorMessage(e)}; reloading to confirm it`, { cause: e, retryable: false });
        else if (isFloeError(e) && DEFINITE_REFUSALS.has(e.kind)) failure = e;
        else if (isFloeError(e, 'commit-state-unknown')) failure = e;
        else failure = new FloeError(SUBSYSTEM, 'commit-state-unknown', `commit of ${protocol.subject} failed without a definite answer: ${errorMessage(e)}`, { cause: e, retryable: false });
      }

      if (failure.kind === 'commit-state-unknown') uncertain = true;
      const retryable = failure.kind === 'commit-state-unknown' || (failure.kind === 'commit-conflict' && failure.retryable);
      const exhausted = attempts > policy.numRetries || Date.now() - started >= policy.totalTimeoutMs;
      if (!retryable || exhausted) {
        if (uncertain) {
          // One last look: the attempt whose outcome was unknown may have landed after all.
          const found = await resolveUnknownOutcome(current, protocol.landed);
          if (found) return { status: 'found', table: found, attempts, uncertain };
          throw protocol.gaveUp(failure, attempts, policy, true);
        }
        if (retryable) throw protocol.gaveUp(failure, attempts, policy, false);
        throw failure;
      }
      await sleep(backoffDelayMs(policy, attempts));
      current = await reloadTable(current);
      if (uncertain && protocol.landed(current.metadata)) return { status: 'found', table: current, attempts, uncertain };
    }
  } catch (e) {
    await discard();
    if (uncertain && !isFloeError(e, 'commit-state-unknown')) {
      throw new FloeError(SUBSYSTEM, 'commit-state-unknown', `${protocol.subject}: an attempt's outcome was unknown, then ${errorMessage(e)}; files were kept — reload and look for ${protocol.subject} before retrying`, { cause: e, retryable: false });
    }
    throw e;
  }
}
