/**
 * Whole-file reads and writes in as few system calls as the kernel allows. `fs.promises.readFile`
 * and `FileHandle.writeFile` move 512 KiB per call and continue on the main thread after each; a
 * process whose main thread is busy decoding the binlog runs one such continuation per turn of its
 * event loop, so a 400 MB key index image took seconds to read where one read takes a quarter of
 * a second. Linux moves at most 0x7ffff000 bytes per read(2) / write(2) (read(2), NOTES): the loops cover
 * that and any short transfer.
 */
import * as fsc from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { promisify } from 'node:util';

/**
 * The file at `path`, in a buffer of its own (offset 0 of its ArrayBuffer: typed-array views into
 * it are aligned). A file that reports no size (a pipe, a /proc file) is read the streaming way.
 */
export async function readWholeFile(path: string): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    if (size === 0) return alignedCopy(await readFile(handle));
    const out = Buffer.allocUnsafeSlow(size);
    const filled = await readInto(handle, out, 0); // short: the file shrank since the stat
    return filled === size ? out : out.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

/** Fills `out` from the file at `position` on; the bytes read (fewer where the file ends first). */
export async function readInto(handle: FileHandle, out: Uint8Array, position: number): Promise<number> {
  let filled = 0;
  while (filled < out.length) {
    const { bytesRead } = await handle.read(out, filled, out.length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled;
}

/** Writes all of `bytes` at the handle's position; the bytes written. */
export async function writeWhole(handle: FileHandle, bytes: Uint8Array): Promise<number> {
  let written = 0;
  while (written < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, written, bytes.length - written);
    written += bytesWritten;
  }
  return written;
}

// The callback API on plain descriptors: a `FileHandle` is an object with a finalizer and a promise
// machinery of its own, which cost the main thread about 1.5 times as much per file as these calls
// (a partitioned checkpoint writes thousands of small files).
const openFd = promisify(fsc.open);
const writeFd = promisify(fsc.write);
const fsyncFd = promisify(fsc.fsync);
const closeFd = promisify(fsc.close);

/**
 * Creates the file at `path` (flags 'wx': it must not exist) with all of `bytes`, and fsyncs it
 * before closing. A failure part-way leaves what was written; the caller removes it.
 */
export async function createDurably(path: string, bytes: Uint8Array): Promise<void> {
  const fd = await openFd(path, 'wx');
  try {
    let written = 0;
    while (written < bytes.length) written += (await writeFd(fd, bytes, written, bytes.length - written)).bytesWritten;
    await fsyncFd(fd);
  } finally {
    await closeFd(fd);
  }
}

/** fsync of a directory, which makes a rename or link in it durable (POSIX); throws what the file system answers. */
export async function syncDirectoryEntries(dir: string): Promise<void> {
  const fd = await openFd(dir, 'r');
  try {
    await fsyncFd(fd);
  } finally {
    await closeFd(fd);
  }
}

function alignedCopy(file: Buffer): Buffer {
  if (file.byteOffset === 0) return file;
  const copy = Buffer.allocUnsafeSlow(file.length);
  file.copy(copy);
  return copy;
}
