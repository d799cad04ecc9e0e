/**
 * The commit point of the filesystem catalog: creating `v<N>.metadata.json` only if absent.
 *
 * When the create itself fails (network, timeout after the SDK's retries), the file may or may not
 * have been written. The bytes tell: every metadata document floe writes is unique (new snapshot ids,
 * timestamps, metadata-log), so if the file now holds exactly our bytes the commit landed; if it holds
 * other bytes another writer won. If it cannot be read, or is absent while the failed request might
 * still be in flight, the outcome is unknown: 'commit-state-unknown', never a plain failure, so that
 * no caller deletes files the commit may reference (pyiceberg CommitStateUnknownException).
 */
import type { FileIO } from '../../io/file-io.js';
import { errorMessage, FloeError, isFloeError } from '../../util/errors.js';
import { joinLocation, metadataFileLocation } from './filesystem-layout.js';

const SUBSYSTEM = 'catalog.filesystem';

export type VersionCreateOutcome = 'created' | 'exists';

export async function createMetadataVersion(io: FileIO, metadataDir: string, version: number, bytes: Uint8Array): Promise<VersionCreateOutcome> {
  // Java writes `v<N>.gz.metadata.json` under gzip compression: that spelling also takes the slot.
  if (await io.exists(joinLocation(metadataDir, `v${version}.gz.metadata.json`))) return 'exists';
  const location = metadataFileLocation(metadataDir, version);
  try {
    return (await io.writeIfAbsent(location, bytes)) ? 'created' : 'exists';
  } catch (e) {
    // Refusals that happen before anything is sent leave nothing behind.
    if (isFloeError(e) && (e.kind === 'unsupported' || e.kind === 'invalid-argument' || e.kind === 'config')) throw e;
    return await resolveFailedCreate(io, location, bytes, e);
  }
}

async function resolveFailedCreate(io: FileIO, location: string, bytes: Uint8Array, writeError: unknown): Promise<VersionCreateOutcome> {
  let found: Uint8Array;
  try {
    found = await io.read(location);
  } catch (readError) {
    const now = isFloeError(readError, 'not-found') ? 'it is absent now, but the request may still be in flight' : `reading it back failed too (${errorMessage(readError)})`;
    throw new FloeError(SUBSYSTEM, 'commit-state-unknown', `creating ${location} failed (${errorMessage(writeError)}) and ${now}; the commit may or may not have landed: do not delete its files, reload the table and look for its snapshot before retrying`, { cause: writeError, retryable: false });
  }
  return equalBytes(found, bytes) ? 'created' : 'exists';
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
