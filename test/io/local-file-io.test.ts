import { readdir, rm, writeFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileIOFor } from '../../src/io/file-io-factory.js';
import { LocalFileIO } from '../../src/io/local-file-io.js';
import { localPathOf, toFileUri } from '../../src/io/local-path.js';
import { S3FileIO } from '../../src/io/s3-file-io.js';
import { FloeError } from '../../src/util/errors.js';
import { runFileIOBehaviourSuite } from './file-io-behaviour.js';
import { tempDir } from '../support/temp-dir.js';

runFileIOBehaviourSuite('local disk, file:// URIs', async () => {
  const dir = await tempDir('local-io');
  return { io: new LocalFileIO(), root: `file://${dir}`, listedRoot: `file://${dir}`, atomicCreate: true, cleanup: () => rm(dir, { recursive: true, force: true }) };
});

runFileIOBehaviourSuite('local disk, plain absolute paths', async () => {
  const dir = await tempDir('local-io');
  return { io: new LocalFileIO(), root: dir, listedRoot: `file://${dir}`, atomicCreate: true, cleanup: () => rm(dir, { recursive: true, force: true }) };
});

describe('LocalFileIO specifics', () => {
  let dir: string;
  const enc = new TextEncoder();
  beforeAll(async () => {
    dir = await tempDir('local-io');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('accepts file:/abs, file:///abs and file://localhost/abs for the same file, and refuses other hosts', async () => {
    const io = new LocalFileIO();
    await io.write(`${dir}/spell.txt`, enc.encode('x'));
    for (const uri of [`file:${dir}/spell.txt`, `file://${dir}/spell.txt`, `file://localhost${dir}/spell.txt`]) {
      expect(await io.exists(uri)).toBe(true);
    }
    const err = await io.read(`file://otherhost${dir}/spell.txt`).catch((e: unknown) => e);
    expect((err as FloeError).kind).toBe('invalid-argument');
    const s3 = await io.read('s3://bucket/key').catch((e: unknown) => e);
    expect((s3 as FloeError).message).toMatch(/expected a local path or file: URI/);
  });

  it('resolves relative plain paths against the working directory, or baseDir when given', async () => {
    await mkdir(path.join(dir, 'rel'), { recursive: true });
    await writeFile(path.join(dir, 'rel', 'f.txt'), 'relative');
    const previous = process.cwd();
    process.chdir(dir);
    try {
      expect(new TextDecoder().decode(await new LocalFileIO().read('rel/f.txt'))).toBe('relative');
      expect(localPathOf('rel/../rel/f.txt')).toBe(path.join(dir, 'rel', 'f.txt'));
    } finally {
      process.chdir(previous);
    }
    expect(new TextDecoder().decode(await new LocalFileIO({ baseDir: dir }).read('rel/f.txt'))).toBe('relative');
    expect(toFileUri('rel/f.txt', dir)).toBe(`file://${dir}/rel/f.txt`);
  });

  it('keeps percent sequences literally, as Hadoop does for partition directories', async () => {
    const io = new LocalFileIO();
    await io.write(`file://${dir}/data/name=a%20b/f.parquet`, enc.encode('p'));
    expect(await readdir(path.join(dir, 'data'))).toEqual(['name=a%20b']);
    expect(await io.list(`file://${dir}/data`)).toEqual([`file://${dir}/data/name=a%20b/f.parquet`]);
  });

  it('never exposes a partially written file to a concurrent reader, and leaves no temporary files', async () => {
    const io = new LocalFileIO();
    const target = path.join(dir, 'partial', 'v1.metadata.json');
    const candidates = Array.from({ length: 6 }, (_, i) => new Uint8Array(2 * 1024 * 1024).fill(65 + i));
    let done = false;
    const seen: number[] = [];
    const reader = (async () => {
      while (!done) {
        try {
          const bytes = await readFile(target);
          // Whatever is visible must be one complete candidate.
          expect(bytes.length).toBe(2 * 1024 * 1024);
          expect(bytes.every((b) => b === bytes[0])).toBe(true);
          seen.push(bytes[0]!);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        }
        await new Promise((r) => setImmediate(r));
      }
    })();
    const results = await Promise.all(candidates.map((c) => io.writeIfAbsent(target, c)));
    done = true;
    await reader;
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = 65 + results.indexOf(true);
    expect(new Set(seen).size).toBeLessThanOrEqual(1);
    if (seen.length > 0) expect(seen[0]).toBe(winner);
    expect((await readFile(target))[0]).toBe(winner);
    expect(await readdir(path.dirname(target))).toEqual(['v1.metadata.json']);
  });

  it('writes into a directory removed since its last write, and a write that fails leaves no temporary file', async () => {
    const io = new LocalFileIO();
    const part = path.join(dir, 'data', 'day=2024-01-01');
    await io.write(path.join(part, 'a.parquet'), enc.encode('a'));
    await rm(part, { recursive: true });
    // the directory is known to the instance; the write finds it missing and makes it again
    await io.write(path.join(part, 'b.parquet'), enc.encode('bb'));
    expect(await readFile(path.join(part, 'b.parquet'), 'utf8')).toBe('bb');
    // a directory where the file should go: the rename fails, the complete temporary file is removed
    await mkdir(path.join(part, 'c.parquet'));
    await expect(io.write(path.join(part, 'c.parquet'), enc.encode('c'))).rejects.toThrow(/io\.local: .*c\.parquet/);
    expect((await readdir(part)).sort()).toEqual(['b.parquet', 'c.parquet']);
  });

  it('writeUnpublished creates the file under its name, in a directory it makes, and never replaces one', async () => {
    const io = new LocalFileIO();
    const part = path.join(dir, 'unpublished', 'day=2024-01-02');
    await io.writeUnpublished(`file://${part}/a.parquet`, enc.encode('a'));
    expect(await readFile(path.join(part, 'a.parquet'), 'utf8')).toBe('a');
    await rm(part, { recursive: true });
    await io.writeUnpublished(`file://${part}/b.parquet`, enc.encode('bb')); // the known directory went away
    const err = await io.writeUnpublished(`file://${part}/b.parquet`, enc.encode('other')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FloeError);
    expect((err as FloeError).message).toMatch(/io\.local: cannot write .*b\.parquet: .*EEXIST/);
    expect(await readFile(path.join(part, 'b.parquet'), 'utf8')).toBe('bb');
    expect(await readdir(part)).toEqual(['b.parquet']); // no temporary file, ever
  });

  it('fileIOFor picks the implementation by scheme and refuses unknown schemes', () => {
    expect(fileIOFor('/tmp/w')).toBeInstanceOf(LocalFileIO);
    expect(fileIOFor('file:///tmp/w')).toBeInstanceOf(LocalFileIO);
    expect(fileIOFor('relative/w')).toBeInstanceOf(LocalFileIO);
    const s3 = fileIOFor('s3://bucket/w', { s3: { endpoint: 'http://127.0.0.1:1', region: 'us-east-1' } });
    expect(s3).toBeInstanceOf(S3FileIO);
    void s3.close?.();
    expect(() => fileIOFor('gs://bucket/w')).toThrow(/no FileIO for gs:\/\/ locations/);
  });
});
