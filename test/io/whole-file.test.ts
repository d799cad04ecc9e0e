import { open, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWholeFile, writeWhole } from '../../src/io/whole-file.js';
import { tempDir } from '../support/temp-dir.js';

/** Turns of the event loop, each holding the main thread `busyMs`, until `work` settles. */
async function turnsWhileBusy<T>(work: Promise<T>, busyMs: number): Promise<{ value: T; turns: number }> {
  let done = false;
  let turns = 0;
  const settled = work.finally(() => {
    done = true;
  });
  while (!done) {
    await new Promise((resolve) => setImmediate(resolve));
    const until = performance.now() + busyMs;
    while (performance.now() < until) {
      // the main thread busy, as a stream decoding the binlog keeps it
    }
    turns++;
  }
  return { value: await settled, turns };
}

describe('whole-file reads and writes', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir('whole-file');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads a file into a buffer of its own, byte for byte', async () => {
    const bytes = new Uint8Array(3 * 1024 * 1024 + 5).map((_, i) => (i * 31) % 251);
    const path = join(dir, 'a.bin');
    await writeFile(path, bytes);
    const read = await readWholeFile(path);
    expect(read.byteOffset).toBe(0);
    expect(read.buffer.byteLength).toBe(bytes.length);
    expect(Buffer.compare(read, bytes)).toBe(0);
    await writeFile(join(dir, 'empty'), new Uint8Array(0));
    expect((await readWholeFile(join(dir, 'empty'))).length).toBe(0);
    // a file whose stat reports no size is read to its end all the same
    const status = await readWholeFile('/proc/self/status');
    expect(status.toString('utf8')).toMatch(/^Name:/);
    await expect(readWholeFile(join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('reads a large file in a few turns of a busy event loop, not one per 512 KiB', async () => {
    const size = 64 * 1024 * 1024;
    const path = join(dir, 'large.bin');
    await writeFile(path, new Uint8Array(size).fill(7));
    const { value, turns } = await turnsWhileBusy(readWholeFile(path), 2);
    expect(value.length).toBe(size);
    // fs.promises.readFile continues once per 512 KiB chunk: at least 128 turns for this file
    expect(turns).toBeLessThan(64);
  });

  it('writes all of a buffer at the handle position', async () => {
    const path = join(dir, 'w.bin');
    const handle = await open(path, 'w');
    try {
      expect(await writeWhole(handle, new Uint8Array([1, 2, 3]))).toBe(3);
      const large = new Uint8Array(5 * 1024 * 1024).fill(9);
      expect(await writeWhole(handle, large)).toBe(large.length);
    } finally {
      await handle.close();
    }
    const back = await readFile(path);
    expect(back.length).toBe(3 + 5 * 1024 * 1024);
    expect([...back.subarray(0, 4)]).toEqual([1, 2, 3, 9]);
  });
});
