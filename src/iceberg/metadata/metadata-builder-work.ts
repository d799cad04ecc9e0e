/**
 * The working state of one metadata change set, shared by the metadata builder's modules, and the two
 * error kinds it throws: 'commit-conflict' (retryable) where Java throws RetryableValidationException,
 * 'invalid-argument' otherwise.
 */
import { FloeError } from '../../util/errors.js';
import type { TableMetadata } from '../spec/table-metadata.js';

const SUBSYSTEM = 'iceberg.metadata-builder';

export function invalid(message: string): FloeError {
  return new FloeError(SUBSYSTEM, 'invalid-argument', message);
}

export function retryable(message: string): FloeError {
  return new FloeError(SUBSYSTEM, 'commit-conflict', `${message}; reload the table and retry`, { retryable: true });
}

/** Mutable working copy while a change set is applied. */
export interface Work {
  m: TableMetadata;
  changed: boolean;
  lastAddedSchemaId?: number;
  lastAddedSpecId?: number;
  lastAddedOrderId?: number;
  addedSnapshotIds: Set<bigint>;
  /** snapshot ids set as main in this change set, in order (for intermediate-snapshot suppression) */
  mainSetTo: bigint[];
  removedSnapshots: boolean;
  nowMs: bigint;
}
