/**
 * The storage seam: everything floe reads or writes goes through a FileIO. Paths are absolute URIs
 * (`file:///abs/path`, `s3://bucket/key`); the local implementation also accepts plain paths, which
 * resolve against the working directory (the golden fixtures use relative paths).
 *
 * Kept as small as hyparquet's AsyncBuffer / iceberg-go's io.IO: callers needing more compose it.
 */
export interface FileIO {
  /** Whole object. Throws FloeError kind 'not-found' when absent. */
  read(path: string): Promise<Uint8Array>;
  /** Bytes [start, end) of an object. */
  readRange(path: string, start: number, end: number): Promise<Uint8Array>;
  /** Size in bytes, or undefined when absent. */
  size(path: string): Promise<number | undefined>;
  /** Creates or replaces an object. Large objects are uploaded in parts where the store needs it. */
  write(path: string, data: Uint8Array): Promise<void>;
  /**
   * Creates an object that nothing refers to yet, under a name no other object has — a data or
   * delete file, which a later commit will reference — as durably as `write`. Unlike `write`, a
   * crash part-way may leave a partial object under its name: harmless, since no snapshot refers
   * to it (orphan removal takes it away), and cheaper on stores where `write` goes through a
   * temporary object. Local disk refuses to replace an existing object. Optional: the
   * `writeUnpublished` function (below) falls back to `write`.
   */
  writeUnpublished?(path: string, data: Uint8Array): Promise<void>;
  /**
   * Creates the object only if nothing exists at `path`, atomically (no-overwrite rename on local disk,
   * `If-None-Match: *` on S3). Returns false, writing nothing, when the object already exists.
   */
  writeIfAbsent(path: string, data: Uint8Array): Promise<boolean>;
  exists(path: string): Promise<boolean>;
  /** Every object whose path starts with `prefix` (recursive), as full URIs. */
  list(prefix: string): Promise<string[]>;
  /** Removes an object; absent objects are not an error. */
  delete(path: string): Promise<void>;
  /**
   * Whether `writeIfAbsent` is really atomic on this store. Some S3 servers silently ignore
   * `If-None-Match` (s3rver does); those must not be used for filesystem-catalog commits.
   * Implementations probe once and cache the answer.
   *
   * `location` (optional) names where the caller will create objects, e.g. a warehouse root: stores
   * whose answer differs per location (S3: per bucket) probe there; others ignore it.
   */
  supportsAtomicCreate(location?: string): Promise<boolean>;
  close?(): Promise<void>;

  // Optional capabilities. Callers use the helpers in `listing.ts`, which fall back to `list` /
  // `delete` when an implementation does not provide them.

  /**
   * The immediate children of the directory `dir` (non-recursive): objects, and directories (local)
   * or common prefixes (S3, delimiter `/`), as full URIs without trailing slash. Empty when absent.
   */
  listChildren?(dir: string): Promise<DirectoryListing>;
  /** Removes every object under the directory `dir`, and on hierarchical stores the directory too. */
  deleteTree?(dir: string): Promise<void>;
  /** Like `list`, with each object's last-modified time (orphan removal spares young files by it). */
  listWithTimes?(prefix: string): Promise<ListedObject[]>;
  /**
   * The absolute path of the file a location is stored in, on a store that is the local file
   * system: a worker thread holding an object's bytes may then write it there with a `LocalFileIO`
   * of its own, which writes as this one does.
   */
  localFilePath?(location: string): string;
}

export interface ListedObject {
  location: string;
  /** Last modification, milliseconds since the epoch. */
  modifiedMs: number;
}

export interface DirectoryListing {
  files: string[];
  directories: string[];
}

/** `FileIO.writeUnpublished` where the store has it, `write` otherwise. */
export function writeUnpublished(io: FileIO, location: string, data: Uint8Array): Promise<void> {
  return io.writeUnpublished ? io.writeUnpublished(location, data) : io.write(location, data);
}
