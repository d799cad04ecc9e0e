/**
 * Whole-file reads and writes in as few system calls as the kernel allows. `fs.promises.readFile`
 * and `FileHandle.writeFile` move 512 KiB per call and continue on the main thread after each; a
 * process whose main thread is busy decoding the binlog runs one such continuation per turn of its
 * event loop, so a 400 MB key index image took seconds to read where one read takes a quarter of
 * a second. Linux moves at most 0x7ffff000 bytes per read(2) / write(2) (read(2), NOTES): the loops cover
 * that and any short transfer.
 */
import { open, readFile, type FileHandle } from 'node:fs/promises';

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

function alignedCopy(file: Buffer): Buffer {
  if (file.byteOffset === 0) return file;
  const copy = Buffer.allocUnsafeSlow(file.length);
  file.copy(copy);
  return copy;
}
