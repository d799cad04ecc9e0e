/**
 * A memory key index (key-index.ts) saved to the state directory when floe stops cleanly, and taken
 * back at the next start instead of being built again from the lake: building it reads the key
 * column of every live data file (a 2M-row table: about 3 s of a core on the bench machine, the
 * largest single cost of a CDC start, docs/performance.md). The disk index (sqlite-key-index.ts)
 * persists by itself; this is the same promise for the indexes that live in memory.
 *
 * The file is a cache of the lake, trusted only when it says exactly which table state it holds:
 * the table's uuid, the key's field ids and types, the schema id and the snapshot id — the index of
 * a snapshot is a function of that snapshot, so a file stamped with the table's head (or with a
 * snapshot only manifest rewrites lead on from, key-index.ts `indexStillMatches`) is that head's
 * index. Anything else — another writer's commit, a checkpoint committed after the save (a crash
 * leaves the file behind its table), a damaged or truncated file (CRC-32 over every byte), another
 * format — and the index is built from the lake as before. The file is removed once taken: the
 * first commit after it makes it stale.
 *
 * Layout (little-endian): `FLOEKIX1` | u32 header length | header JSON (stamp, the file slots' paths,
 * the string keys, section lengths) | the numeric keys' table (number-key-table.ts state, 16 bytes a
 * slot) | the string keys' values (f64 each, slot × 2^32 + position, in the header's key order) |
 * u32 CRC-32 of everything before it.
 */
import { open, rename, rm, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';
import { errorMessage } from '../../util/errors.js';
import type { FileIO } from '../../io/file-io.js';
import type { DataFile } from '../spec/data-file.js';
import { currentSnapshot } from '../spec/snapshot-ids.js';
import type { TableMetadata } from '../spec/table-metadata.js';
import { readManifestEntries, readSnapshotManifests } from '../table/index.js';
import { indexStillMatches, MemoryKeyIndex, type SavedMemoryIndex } from './key-index.js';
import type { DiskIndexIdentity } from './sqlite-key-index.js';

const MAGIC = Buffer.from('FLOEKIX1', 'latin1');
/** The layout version; a file of another one is not read. */
const FORMAT = 1;

interface Header {
  format: number;
  tableUuid: string;
  keyFieldIds: number[];
  keyTypes: string;
  schemaId: number;
  /** The snapshot the index holds (decimal text), null for a table without one. */
  snapshotId: string | null;
  /** File slot → data file path; null for a slot a compaction freed. */
  files: (string | null)[];
  numbers: { bytes: number; size: number; occupied: number };
  strings: string[];
}

export type SavedIndexLoad = { index: MemoryKeyIndex } | { index: undefined; why: string; missing: boolean };

/**
 * Writes `saved` (the index of the table whose identity is `identity`) to `path`: a temporary file
 * renamed over it, so a reader sees the old file, the new one or none — never half of one.
 */
export async function saveMemoryIndex(path: string, identity: DiskIndexIdentity, saved: SavedMemoryIndex): Promise<void> {
  const numbers = saved.numbers;
  const header: Header = {
    format: FORMAT,
    tableUuid: identity.tableUuid,
    keyFieldIds: [...identity.keyFieldIds],
    keyTypes: identity.keyTypes,
    schemaId: identity.schemaId,
    snapshotId: saved.snapshotId === undefined ? null : saved.snapshotId.toString(),
    files: saved.files.map((f) => f?.filePath ?? null),
    numbers: { bytes: numbers.buffer.byteLength, size: numbers.size, occupied: numbers.occupied },
    strings: saved.strings.keys,
  };
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(headerBytes.length);
  const parts: Uint8Array[] = [MAGIC, length, headerBytes, new Uint8Array(numbers.buffer), new Uint8Array(saved.strings.values.buffer, saved.strings.values.byteOffset, saved.strings.values.byteLength)];
  const crc = checksum(parts);
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32LE(crc);
  parts.push(trailer);

  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  const handle = await open(temporary, 'w');
  try {
    for (const p of parts) await handle.write(p);
  } catch (e) {
    await handle.close();
    await rm(temporary, { force: true });
    throw e;
  }
  await handle.close();
  await rename(temporary, path);
}

/**
 * The index saved at `path` for the table `table` as it is now (see the header), removed from disk
 * once read; `missing` when there is none. The data files of its slots are the live ones of the
 * table's head: a slot naming a file the head does not hold makes the file unusable.
 */
export async function takeMemoryIndex(path: string, table: { io: FileIO; metadata: TableMetadata }, identity: DiskIndexIdentity): Promise<SavedIndexLoad> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { index: undefined, why: 'no saved index', missing: true };
    return { index: undefined, why: errorMessage(e), missing: false };
  }
  let loaded: SavedIndexLoad;
  try {
    loaded = await readSaved(handle, table, identity);
  } catch (e) {
    loaded = { index: undefined, why: `unreadable: ${errorMessage(e)}`, missing: false };
  } finally {
    await handle.close();
  }
  // taken or useless: the next commit would make it stale either way
  await rm(path, { force: true });
  return loaded;
}

async function readSaved(handle: import('node:fs/promises').FileHandle, table: { io: FileIO; metadata: TableMetadata }, identity: DiskIndexIdentity): Promise<SavedIndexLoad> {
  // the table's live data files are read meanwhile (its manifests: the longer part of a load, each
  // read waiting its turn among a stream's changes)
  const live = liveDataFiles(table);
  live.catch(() => {}); // raised below, if the file is worth reading that far
  const size = (await handle.stat()).size;
  const fixed = Buffer.alloc(MAGIC.length + 4);
  await readExactly(handle, fixed, 0);
  if (!fixed.subarray(0, MAGIC.length).equals(MAGIC)) return unusable('not a saved key index (magic)');
  const headerLength = fixed.readUInt32LE(MAGIC.length);
  if (fixed.length + headerLength + 4 > size) return unusable(`a header of ${headerLength} bytes in a file of ${size}`);
  const headerBytes = Buffer.alloc(headerLength);
  await readExactly(handle, headerBytes, fixed.length);
  const header = JSON.parse(headerBytes.toString('utf8')) as Header;
  if (header.format !== FORMAT) return unusable(`format ${header.format}, expected ${FORMAT}`);
  const stamp = sameIdentity(header, identity);
  if (stamp) return unusable(stamp);
  const m = table.metadata;
  const snapshotId = header.snapshotId === null ? undefined : BigInt(header.snapshotId);
  const head = currentSnapshot(m)?.snapshotId;
  if (!indexStillMatches(m, snapshotId, head)) return unusable(`it holds snapshot ${header.snapshotId ?? 'none'}, the table is at ${head ?? 'none'}`);
  const stringCount = header.strings.length;
  const expected = fixed.length + headerLength + header.numbers.bytes + 8 * stringCount + 4;
  if (expected !== size) return unusable(`${size} bytes, its header says ${expected}`);

  const numbers = new ArrayBuffer(header.numbers.bytes);
  let at = fixed.length + headerLength;
  await readExactly(handle, new Uint8Array(numbers), at);
  at += numbers.byteLength;
  const values = new Float64Array(stringCount);
  await readExactly(handle, new Uint8Array(values.buffer), at);
  at += values.byteLength;
  const trailer = Buffer.alloc(4);
  await readExactly(handle, trailer, at);
  const crc = checksum([fixed, headerBytes, new Uint8Array(numbers), new Uint8Array(values.buffer)]);
  if (crc !== trailer.readUInt32LE(0)) return unusable('its checksum does not match (a damaged file)');

  const liveFiles = await live;
  const files: (DataFile | undefined)[] = [];
  for (const path of header.files) {
    if (path === null) {
      files.push(undefined);
      continue;
    }
    const file = liveFiles.get(path);
    if (!file) return unusable(`it names ${path}, which is not a live data file of the table`);
    files.push(file);
  }
  const index = MemoryKeyIndex.fromSaved(head, {
    snapshotId,
    files,
    numbers: { buffer: numbers, size: header.numbers.size, occupied: header.numbers.occupied },
    strings: { keys: header.strings, values },
  });
  return { index };
}

/** CRC-32 of the parts one after another (zlib's crc32 of an empty part gives 0, not the running value: skipped). */
function checksum(parts: readonly Uint8Array[]): number {
  let crc = 0;
  for (const p of parts) if (p.length > 0) crc = crc32(p, crc);
  return crc >>> 0;
}

function unusable(why: string): SavedIndexLoad {
  return { index: undefined, why, missing: false };
}

/** Why the stamp is not the table's and key's, or undefined when it is. */
function sameIdentity(header: Header, identity: DiskIndexIdentity): string | undefined {
  if (header.tableUuid !== identity.tableUuid) return `it is of table ${header.tableUuid}, not ${identity.tableUuid}`;
  if (JSON.stringify(header.keyFieldIds) !== JSON.stringify(identity.keyFieldIds) || header.keyTypes !== identity.keyTypes) return 'it is of another key';
  if (header.schemaId !== identity.schemaId) return `it was saved with schema ${header.schemaId}, the table's is ${identity.schemaId}`;
  return undefined;
}

async function readExactly(handle: import('node:fs/promises').FileHandle, into: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < into.length) {
    const { bytesRead } = await handle.read(into, done, into.length - done, position + done);
    if (bytesRead === 0) throw new Error(`the file ends at byte ${position + done}, ${into.length - done} bytes early`);
    done += bytesRead;
  }
}

/** The head's live data files by path (its data manifests only). */
async function liveDataFiles(table: { io: FileIO; metadata: TableMetadata }): Promise<Map<string, DataFile>> {
  const files = new Map<string, DataFile>();
  const snapshot = currentSnapshot(table.metadata);
  if (!snapshot) return files;
  for (const manifest of await readSnapshotManifests(table.io, snapshot)) {
    if (manifest.content !== 'data') continue;
    for (const entry of await readManifestEntries(table.io, manifest)) {
      if (entry.status !== 'deleted') files.set(entry.dataFile.filePath, entry.dataFile);
    }
  }
  return files;
}
