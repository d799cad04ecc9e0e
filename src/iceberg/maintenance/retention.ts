/**
 * Which snapshots an expiry keeps: Java `RemoveSnapshots.internalApply` (core/…/RemoveSnapshots.java),
 * plus snapshots a caller must keep reachable (floe's checkpoint stamps, checkpoint-retention.ts).
 *
 * - refs: `main` is always kept; another branch or tag is kept while its head is younger than its
 *   `max-ref-age-ms` (else the table's `history.expire.max-ref-age-ms`, default forever) — an older
 *   one is removed, as in Java, and its head may then expire;
 * - on every kept branch, the ancestors of its head are kept while fewer than `min-snapshots-to-keep`
 *   are kept or while they are at or after the branch's cutoff (`now - max-snapshot-age-ms` of the
 *   ref, else the table default), and the walk stops at the first one failing both;
 * - a snapshot on no kept branch's ancestry and not a tag head (e.g. left over by a rollback) is
 *   kept only while it is at or after the table-wide cutoff;
 * - every kept ref's head is kept (the current snapshot is main's head);
 * - floe's addition: each protected snapshot is kept, and when it lies on a kept branch's ancestry,
 *   so is every snapshot between the branch head and it — walks from the head (`lastCommitted`)
 *   stop at the first missing parent, so a kept snapshot behind a gap would be unreachable.
 *
 * Table-wide defaults: table properties `history.expire.max-snapshot-age-ms` and
 * `history.expire.min-snapshots-to-keep` (Java defaults 5 days and 1); the caller may pass its own
 * fallbacks for tables without them, and explicit values (`expireOlderThanMs`, `retainLast`) that
 * override the properties, as Java's `expireOlderThan()` / `retainLast()` do.
 */
import { FloeError } from '../../util/errors.js';
import { ancestorsOf } from '../spec/snapshot-ids.js';
import { MAIN_BRANCH } from '../spec/table-metadata-constants.js';
import type { Snapshot, TableMetadata } from '../spec/table-metadata.js';

const MAX_SNAPSHOT_AGE_MS = 'history.expire.max-snapshot-age-ms';
const MAX_SNAPSHOT_AGE_MS_DEFAULT = 5n * 24n * 60n * 60n * 1000n;
const MIN_SNAPSHOTS_TO_KEEP = 'history.expire.min-snapshots-to-keep';
const MIN_SNAPSHOTS_TO_KEEP_DEFAULT = 1;
const MAX_REF_AGE_MS = 'history.expire.max-ref-age-ms';
/** Java `Long.MAX_VALUE`: refs never age out unless configured. */
const MAX_REF_AGE_MS_DEFAULT = (1n << 63n) - 1n;

export interface RetentionPolicy {
  nowMs: bigint;
  /** Explicit cutoff timestamp (Java `expireOlderThan`): wins over the table property. */
  expireOlderThanMs?: bigint;
  /** Max snapshot age for tables without `history.expire.max-snapshot-age-ms` (default Java's 5 days). */
  defaultMaxSnapshotAgeMs?: bigint;
  /** Explicit minimum of snapshots kept per branch (Java `retainLast`, >= 1): wins over the table property. */
  retainLast?: number;
  /** Minimum for tables without `history.expire.min-snapshots-to-keep` (default 1). */
  defaultMinSnapshotsToKeep?: number;
  /** Snapshots that must stay, reachable from the branch heads whose history holds them. */
  protectedSnapshotIds?: Iterable<bigint>;
}

export interface RetentionPlan {
  /** Snapshots that stay. */
  retained: Set<bigint>;
  /** Snapshots to remove, oldest first. */
  expired: Snapshot[];
  /** Refs to remove (aged out, or pointing at a missing snapshot). */
  removedRefs: string[];
  /** Snapshots kept only because they are protected or lie between a branch head and a protected one. */
  keptForProtection: bigint[];
  /** The table-wide cutoff used (snapshots before it may expire). */
  cutoffMs: bigint;
  minSnapshotsToKeep: number;
}

function invalidProperty(key: string, value: string, expected: string): FloeError {
  return new FloeError('iceberg.maintenance', 'invalid-argument', `table property ${key} is ${JSON.stringify(value)}; expected ${expected}. Fix the property (set-properties) or remove it`);
}

/** A long table property (Java `propertyAsLong`), or undefined when absent. */
function longProperty(metadata: TableMetadata, key: string): bigint | undefined {
  const text = metadata.properties[key];
  if (text === undefined) return undefined;
  if (!/^\s*-?\d+\s*$/.test(text)) throw invalidProperty(key, text, 'an integer number of milliseconds');
  return BigInt(text.trim());
}

function intPropertyStrict(metadata: TableMetadata, key: string): number | undefined {
  const text = metadata.properties[key];
  if (text === undefined) return undefined;
  const n = Number(text.trim());
  if (!/^\s*\d+\s*$/.test(text) || !Number.isSafeInteger(n)) throw invalidProperty(key, text, 'a non-negative integer');
  return n;
}

export function planRetention(metadata: TableMetadata, policy: RetentionPolicy): RetentionPlan {
  const now = policy.nowMs;
  const maxAge = longProperty(metadata, MAX_SNAPSHOT_AGE_MS) ?? policy.defaultMaxSnapshotAgeMs ?? MAX_SNAPSHOT_AGE_MS_DEFAULT;
  const cutoffMs = policy.expireOlderThanMs ?? now - maxAge;
  if (policy.retainLast !== undefined && (!Number.isSafeInteger(policy.retainLast) || policy.retainLast < 1)) {
    throw new FloeError('iceberg.maintenance', 'invalid-argument', `snapshots to retain must be at least 1, found ${policy.retainLast}`);
  }
  const minSnapshotsToKeep = policy.retainLast ?? intPropertyStrict(metadata, MIN_SNAPSHOTS_TO_KEEP) ?? policy.defaultMinSnapshotsToKeep ?? MIN_SNAPSHOTS_TO_KEEP_DEFAULT;
  const defaultMaxRefAge = longProperty(metadata, MAX_REF_AGE_MS) ?? MAX_REF_AGE_MS_DEFAULT;
  const byId = new Map(metadata.snapshots.map((s) => [s.snapshotId, s]));

  // Refs that stay (Java computeRetainedRefs).
  const keptRefs = new Map<string, (typeof metadata.refs)[string]>();
  const removedRefs: string[] = [];
  for (const [name, ref] of Object.entries(metadata.refs)) {
    if (name === MAIN_BRANCH) {
      keptRefs.set(name, ref);
      continue;
    }
    const head = byId.get(ref.snapshotId);
    const maxRefAge = ref.maxRefAgeMs ?? defaultMaxRefAge;
    if (head !== undefined && now - head.timestampMs <= maxRefAge) keptRefs.set(name, ref);
    else removedRefs.push(name);
  }

  const retained = new Set<bigint>();
  for (const ref of keptRefs.values()) retained.add(ref.snapshotId);

  // Branch histories (Java computeAllBranchSnapshotsToRetain).
  const onKeptHistory = new Set<bigint>();
  const branchAncestries: Snapshot[][] = [];
  for (const ref of keptRefs.values()) {
    if (ref.type !== 'branch') {
      onKeptHistory.add(ref.snapshotId);
      continue;
    }
    const ancestry = ancestorsOf(metadata, ref.snapshotId);
    branchAncestries.push(ancestry);
    for (const s of ancestry) onKeptHistory.add(s.snapshotId);
    const branchCutoff = ref.maxSnapshotAgeMs !== undefined ? now - ref.maxSnapshotAgeMs : cutoffMs;
    const branchMin = ref.minSnapshotsToKeep ?? minSnapshotsToKeep;
    let kept = 0;
    for (const s of ancestry) {
      if (kept < branchMin || s.timestampMs >= branchCutoff) {
        retained.add(s.snapshotId);
        kept++;
      } else {
        break;
      }
    }
  }

  // Snapshots on no kept history (Java unreferencedSnapshotsToRetain).
  for (const s of metadata.snapshots) {
    if (!onKeptHistory.has(s.snapshotId) && s.timestampMs >= cutoffMs) retained.add(s.snapshotId);
  }

  // Protected snapshots, kept reachable from the heads whose history holds them.
  const keptForProtection: bigint[] = [];
  const keep = (id: bigint) => {
    if (retained.has(id)) return;
    retained.add(id);
    keptForProtection.push(id);
  };
  for (const id of policy.protectedSnapshotIds ?? []) {
    if (!byId.has(id)) continue;
    keep(id);
    for (const ancestry of branchAncestries) {
      const at = ancestry.findIndex((s) => s.snapshotId === id);
      for (let i = 0; i < at; i++) keep(ancestry[i]!.snapshotId);
    }
  }

  const expired = metadata.snapshots.filter((s) => !retained.has(s.snapshotId)).sort((a, b) => (a.timestampMs < b.timestampMs ? -1 : a.timestampMs > b.timestampMs ? 1 : 0));
  return { retained, expired, removedRefs, keptForProtection, cutoffMs, minSnapshotsToKeep };
}
