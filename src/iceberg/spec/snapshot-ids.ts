/**
 * Snapshot identity and lineage: fresh snapshot ids the way Java makes them, and walks over the
 * parent chain (what the idempotent committer reads to find checkpoints already committed, docs/design.md §4).
 */
import type { Snapshot, TableMetadata } from './table-metadata.js';

const LONG_MAX = (1n << 63n) - 1n;

/**
 * A new positive 63-bit snapshot id, as Java's `SnapshotIdGeneratorUtil.generateSnapshotID`: a random
 * (version 4) UUID's most and least significant halves XOR-ed, masked with Long.MAX_VALUE (spec App. F).
 * Random ids keep concurrent writers from colliding (duplicate ids break Spark: icelake#211).
 */
export function newSnapshotId(): bigint {
  for (;;) {
    const bytes = new Uint8Array(16);
    globalThis.crypto.getRandomValues(bytes);
    bytes[6] = (bytes[6]! & 0x0f) | 0x40; // UUID version 4
    bytes[8] = (bytes[8]! & 0x3f) | 0x80; // IETF variant
    const view = new DataView(bytes.buffer);
    const id = (view.getBigUint64(0) ^ view.getBigUint64(8)) & LONG_MAX;
    if (id !== 0n) return id;
  }
}

/** A random lowercase UUID string (table uuids). */
export function newUuid(): string {
  return globalThis.crypto.randomUUID();
}

export function snapshotById(metadata: TableMetadata, snapshotId: bigint): Snapshot | undefined {
  return metadata.snapshots.find((s) => s.snapshotId === snapshotId);
}

/** The current snapshot, or undefined for a table without one. */
export function currentSnapshot(metadata: TableMetadata): Snapshot | undefined {
  return metadata.currentSnapshotId === undefined ? undefined : snapshotById(metadata, metadata.currentSnapshotId);
}

/**
 * The snapshot `snapshotId` and its ancestors, newest first, following `parent-snapshot-id` until a
 * snapshot has no parent or its parent was expired (removed from metadata). Empty when `snapshotId` is
 * not in the metadata.
 */
export function ancestorsOf(metadata: TableMetadata, snapshotId: bigint | undefined): Snapshot[] {
  const byId = new Map(metadata.snapshots.map((s) => [s.snapshotId, s]));
  const out: Snapshot[] = [];
  const seen = new Set<bigint>();
  let next = snapshotId === undefined ? undefined : byId.get(snapshotId);
  while (next && !seen.has(next.snapshotId)) {
    out.push(next);
    seen.add(next.snapshotId);
    next = next.parentSnapshotId === undefined ? undefined : byId.get(next.parentSnapshotId);
  }
  return out;
}
