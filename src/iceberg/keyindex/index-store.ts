/**
 * A memory key index (memory-key-index.ts) persisted under the state directory as it changes, so
 * that a start — after a clean stop or a crash alike — loads it instead of reading every data file's
 * key column again (Moonlink and Paimon keep such indexes beside the data for the same reason):
 *
 *   <table uuid>.keyindex      the image: the whole index as one patch (index-patch.ts)
 *   <table uuid>.keyindex.log  the patches applied since, appended as each commit lands
 *
 * Each is a cache of the lake, trusted only as far as it says what it holds: a header with the
 * table's uuid and the key (field ids, types), and every patch stamped with the snapshot it applies
 * on and the one it leaves. A load replays the log's patches while each applies on the snapshot the
 * one before left; the first that does not (a record torn by a crash, a write that failed) ends the
 * replay, and the index is caught up from the lake from there (key-index-catch-up.ts). A record is
 * framed by its length and CRC-32, so a torn or damaged one is never applied.
 *
 * The log belongs to one image: both headers carry the image's random id, and a log of another
 * image (a crash between writing a new image and starting its log) is ignored. Writes are queued
 * and run one after another off the caller's path (`append` returns at once); a failed write stops
 * the persistence of the index (the files then describe an older state, which a load catches up
 * from, or rebuilds) and is reported once. Nothing is fsynced: a kill leaves the page cache to the
 * kernel, and what a power loss tears is found by the checksums (delivery note: an index then
 * falls back to the lake, never to a wrong answer).
 *
 * Layout (little-endian): `FLOEKIX2` | u32 header length | header JSON | padding to 8 | records;
 * a record: u32 length | u32 CRC-32 of the payload | payload (a multiple of 8 bytes).
 */
import { mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';
import { readWholeFile, writeWhole } from '../../io/whole-file.js';
import { errorMessage } from '../../util/errors.js';
import { decodePatch, encodePatch, type IndexPatch } from './index-patch.js';

const MAGIC = Buffer.from('FLOEKIX2', 'latin1');

/** What a persisted index must match to be used for a table. */
export interface IndexIdentity {
  readonly tableUuid: string;
  readonly keyFieldIds: readonly number[];
  /** The key columns' types (JSON): what KeyIds depend on (a schema change that leaves them alone keeps the index). */
  readonly keyTypes: string;
}

interface Header extends IndexIdentity {
  /** The image this file is (image) or follows (log). */
  readonly imageId: string;
}

export type StoredIndex = { patches: IndexPatch[]; imageId: string; imageBytes: number; logBytes: number } | { patches: undefined; why: string; missing: boolean };

/** The image and the log of the table whose image is at `path`. */
function logPath(path: string): string {
  return `${path}.log`;
}

/**
 * The patches persisted at `path` (the image, then the log's that follow it), or why there are none
 * that can be used.
 */
export async function loadStoredIndex(path: string, identity: IndexIdentity): Promise<StoredIndex> {
  let image: Buffer;
  try {
    image = await readWholeFile(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { patches: undefined, why: 'no persisted index', missing: true };
    return { patches: undefined, why: errorMessage(e), missing: false };
  }
  try {
    const head = readHeader(image, identity);
    if ('why' in head) return { patches: undefined, why: head.why, missing: false };
    const [first] = readRecords(image, head.at, 1);
    if (!first) return { patches: undefined, why: 'its image is damaged (no whole record)', missing: false };
    const imagePatch = decodePatch(first);
    if (imagePatch.from !== 'image') return { patches: undefined, why: 'its image file holds a patch, not an image', missing: false };
    const patches = [imagePatch];
    let logBytes = 0;
    const log = await readWholeFile(logPath(path)).catch(() => undefined);
    if (log) {
      const logHead = readHeader(log, identity);
      if (!('why' in logHead) && logHead.header.imageId === head.header.imageId) {
        for (const record of readRecords(log, logHead.at)) patches.push(decodePatch(record));
        logBytes = log.length;
      }
    }
    return { patches, imageId: head.header.imageId, imageBytes: image.length, logBytes };
  } catch (e) {
    return { patches: undefined, why: `unreadable (${errorMessage(e)})`, missing: false };
  }
}

/** The persistence of one index: its image rewritten now and then, its patches appended (see the header). */
export class IndexStore {
  private tail: Promise<void> = Promise.resolve();
  private failed = false;
  private imageId = '';
  private log: FileHandle | undefined;
  /** Bytes written, for when to write a new image (`wantsImage`). */
  imageBytes = 0;
  logBytes = 0;

  constructor(
    readonly path: string,
    private readonly identity: IndexIdentity,
    private readonly warn: (message: string) => void,
  ) {}

  /** Continues the log of a loaded image (`loadStoredIndex`) instead of writing a new image. */
  adopt(loaded: { imageId: string; imageBytes: number; logBytes: number }): void {
    this.imageId = loaded.imageId;
    this.imageBytes = loaded.imageBytes;
    this.logBytes = loaded.logBytes;
    this.queue(async () => {
      // a log that was not this image's (ignored at the load), or none, starts again
      if (loaded.logBytes === 0) await this.startLog();
      else this.log = await open(logPath(this.path), 'a');
    });
  }

  /** Whether the log has grown enough that a new image is worth writing (it shortens the next load). */
  get wantsImage(): boolean {
    return this.logBytes > Math.max(64 * 1024 * 1024, this.imageBytes);
  }

  /**
   * Writes `image` (the index's whole state, taken now) as the image, and starts a new log after
   * it: patches appended from now on follow it.
   */
  writeImage(image: IndexPatch): void {
    const id = globalThis.crypto.randomUUID();
    const records = frame(encodePatch(image));
    this.queue(async () => {
      await this.log?.close();
      this.log = undefined;
      this.imageId = id;
      const temporary = `${this.path}.${process.pid}.tmp`;
      await mkdir(dirname(this.path), { recursive: true });
      const handle = await open(temporary, 'w');
      try {
        const bytes = await writeAll(handle, [headerBytes({ ...this.identity, imageId: id }), ...records]);
        this.imageBytes = bytes;
      } finally {
        await handle.close();
      }
      await rename(temporary, this.path);
      await this.startLog();
    });
  }

  /** Appends `patch` to the log (after what is queued). */
  append(patch: IndexPatch): void {
    const records = frame(encodePatch(patch));
    this.queue(async () => {
      if (!this.log) return;
      this.logBytes += await writeAll(this.log, records);
    });
  }

  /** Waits for the queued writes (a clean stop); whether they all succeeded. */
  async flush(): Promise<boolean> {
    await this.tail;
    return !this.failed;
  }

  /** Ends the persistence (the files stay for the next start). */
  async close(): Promise<void> {
    await this.tail;
    await this.log?.close();
    this.log = undefined;
    this.failed = true;
  }

  private async startLog(): Promise<void> {
    const temporary = `${logPath(this.path)}.${process.pid}.tmp`;
    const handle = await open(temporary, 'w');
    try {
      this.logBytes = await writeAll(handle, [headerBytes({ ...this.identity, imageId: this.imageId })]);
    } finally {
      await handle.close();
    }
    await rename(temporary, logPath(this.path));
    this.log = await open(logPath(this.path), 'a');
  }

  private queue(write: () => Promise<void>): void {
    this.tail = this.tail.then(async () => {
      if (this.failed) return;
      try {
        await write();
      } catch (e) {
        this.failed = true;
        this.warn(`key index: persisting the index of table ${this.identity.tableUuid} to ${this.path} failed (${errorMessage(e)}); it is no longer persisted — the next start catches it up from the lake or builds it again`);
        await this.log?.close().catch(() => {});
        this.log = undefined;
      }
    });
  }
}

/** Removes a persisted index (its image and log). */
export async function removeStoredIndex(path: string): Promise<void> {
  await rm(path, { force: true });
  await rm(logPath(path), { force: true });
}

/** The size of a persisted index's files (the benchmark: bytes per key on disk). */
export async function storedIndexBytes(path: string): Promise<number> {
  let n = 0;
  for (const p of [path, logPath(path)]) n += (await stat(p).catch(() => undefined))?.size ?? 0;
  return n;
}

function headerBytes(header: Header): Uint8Array {
  const json = Buffer.from(JSON.stringify({ format: 2, ...header }), 'utf8');
  const out = Buffer.alloc(MAGIC.length + 4 + json.length + ((8 - ((MAGIC.length + 4 + json.length) % 8)) % 8));
  MAGIC.copy(out, 0);
  out.writeUInt32LE(json.length, MAGIC.length);
  json.copy(out, MAGIC.length + 4);
  return out;
}

function readHeader(file: Buffer, identity: IndexIdentity): { header: Header; at: number } | { why: string } {
  if (file.length < MAGIC.length + 4 || !file.subarray(0, MAGIC.length).equals(MAGIC)) return { why: 'not a persisted key index of this format (magic)' };
  const length = file.readUInt32LE(MAGIC.length);
  const header = JSON.parse(file.subarray(MAGIC.length + 4, MAGIC.length + 4 + length).toString('utf8')) as Header & { format: number };
  if (header.format !== 2) return { why: `format ${header.format}, expected 2` };
  if (header.tableUuid !== identity.tableUuid) return { why: `it is of table ${header.tableUuid}, not ${identity.tableUuid}` };
  if (JSON.stringify(header.keyFieldIds) !== JSON.stringify(identity.keyFieldIds) || header.keyTypes !== identity.keyTypes) return { why: 'it is of another key' };
  const at = MAGIC.length + 4 + length;
  return { header, at: at + ((8 - (at % 8)) % 8) };
}

/** The payloads of the whole, intact records from `at` on (up to `limit`); a torn or damaged one ends them. */
function readRecords(file: Buffer, at: number, limit = Infinity): Uint8Array[] {
  const out: Uint8Array[] = [];
  while (out.length < limit && at + 8 <= file.length) {
    const length = file.readUInt32LE(at);
    const crc = file.readUInt32LE(at + 4);
    if (length % 8 !== 0 || at + 8 + length > file.length) break;
    const payload = new Uint8Array(file.buffer, file.byteOffset + at + 8, length);
    if (checksum([payload]) !== crc) break;
    out.push(payload);
    at += 8 + length;
  }
  return out;
}

/** A record of `parts`: length, checksum, the parts padded to a multiple of 8. */
function frame(parts: Uint8Array[]): Uint8Array[] {
  const length = parts.reduce((n, p) => n + p.length, 0);
  const padding = new Uint8Array((8 - (length % 8)) % 8);
  const body = [...parts, padding];
  const head = Buffer.alloc(8);
  head.writeUInt32LE(length + padding.length, 0);
  head.writeUInt32LE(checksum(body), 4);
  return [head, ...body];
}

/** CRC-32 of the parts one after another (zlib's crc32 of an empty part gives 0, not the running value: skipped). */
function checksum(parts: readonly Uint8Array[]): number {
  let crc = 0;
  for (const p of parts) if (p.length > 0) crc = crc32(p, crc);
  return crc >>> 0;
}

async function writeAll(handle: FileHandle, parts: readonly Uint8Array[]): Promise<number> {
  let n = 0;
  for (const p of parts) {
    if (p.length === 0) continue;
    n += await writeWhole(handle, p);
  }
  return n;
}

