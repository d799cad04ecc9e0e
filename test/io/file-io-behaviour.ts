/**
 * The behaviour every FileIO must show, run against local disk, s3rver and (with Docker) MinIO.
 * `setup` returns a FileIO and a fresh, empty root location under which the tests write.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileIO } from '../../src/io/file-io.js';
import { listChildren } from '../../src/io/listing.js';
import { FloeError } from '../../src/util/errors.js';

export interface FileIOUnderTest {
  io: FileIO;
  /** Empty directory location (URI or path) without trailing slash. */
  root: string;
  /** How `list` spells the root in its results (e.g. file:///abs for a plain local path). */
  listedRoot: string;
  /** Whether this store really refuses overwrites in writeIfAbsent. */
  atomicCreate: boolean;
  /**
   * s3rver 3.7 bug: a delimiter listing reports a common prefix only when some object sits directly
   * in it (its directory walk prunes deeper levels). Real S3 and MinIO report every common prefix.
   */
  shallowCommonPrefixes?: boolean;
  cleanup(): Promise<void>;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

export function runFileIOBehaviourSuite(name: string, setup: () => Promise<FileIOUnderTest>): void {
  describe(`FileIO behaviour: ${name}`, () => {
    let t: FileIOUnderTest;
    let io: FileIO;
    const at = (rel: string) => `${t.root}/${rel}`;
    const listed = (rel: string) => `${t.listedRoot}/${rel}`;

    beforeAll(async () => {
      t = await setup();
      io = t.io;
    });
    afterAll(async () => {
      await t?.cleanup();
    });

    it('writes, reads back every byte value, and replaces on write', async () => {
      const all = new Uint8Array(256).map((_, i) => i);
      await io.write(at('rw/deep/nested/a.bin'), all);
      expect(await io.read(at('rw/deep/nested/a.bin'))).toEqual(all);
      expect(await io.size(at('rw/deep/nested/a.bin'))).toBe(256);
      expect(await io.exists(at('rw/deep/nested/a.bin'))).toBe(true);
      await io.write(at('rw/deep/nested/a.bin'), enc.encode('second'));
      expect(dec.decode(await io.read(at('rw/deep/nested/a.bin')))).toBe('second');
      await io.write(at('rw/empty'), new Uint8Array(0));
      expect(await io.size(at('rw/empty'))).toBe(0);
      expect(await io.read(at('rw/empty'))).toEqual(new Uint8Array(0));
    });

    it('reports absent objects as undefined / false / not-found', async () => {
      expect(await io.size(at('absent/x'))).toBeUndefined();
      expect(await io.exists(at('absent/x'))).toBe(false);
      const err = await io.read(at('absent/x')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FloeError);
      expect((err as FloeError).kind).toBe('not-found');
      const errRange = await io.readRange(at('absent/x'), 0, 1).catch((e: unknown) => e);
      expect((errRange as FloeError).kind).toBe('not-found');
      // A "directory" is not an object.
      await io.write(at('dir-not-object/f'), enc.encode('x'));
      expect(await io.exists(at('dir-not-object'))).toBe(false);
    });

    it('reads byte ranges exactly and refuses ranges past the end', async () => {
      const data = randomBytes(4096);
      await io.write(at('range/r.bin'), data);
      expect(Buffer.from(await io.readRange(at('range/r.bin'), 100, 1100))).toEqual(data.subarray(100, 1100));
      expect(Buffer.from(await io.readRange(at('range/r.bin'), 4000, 4096))).toEqual(data.subarray(4000));
      expect((await io.readRange(at('range/r.bin'), 7, 7)).length).toBe(0);
      const past = await io.readRange(at('range/r.bin'), 4000, 5000).catch((e: unknown) => e);
      expect((past as FloeError).kind).toBe('invalid-argument');
      const inverted = await io.readRange(at('range/r.bin'), 10, 5).catch((e: unknown) => e);
      expect((inverted as FloeError).kind).toBe('invalid-argument');
    });

    it('writeIfAbsent creates once and then reports the object as existing', async () => {
      expect(await io.writeIfAbsent(at('create/v1.json'), enc.encode('first'))).toBe(true);
      expect(dec.decode(await io.read(at('create/v1.json')))).toBe('first');
      const second = await io.writeIfAbsent(at('create/v1.json'), enc.encode('second'));
      if (t.atomicCreate) {
        expect(second).toBe(false);
        expect(dec.decode(await io.read(at('create/v1.json')))).toBe('first');
      }
      expect(await io.supportsAtomicCreate(t.root)).toBe(t.atomicCreate);
    });

    it('writeIfAbsent under contention: exactly one of many concurrent creators wins', async (ctx) => {
      if (!t.atomicCreate) ctx.skip(); // not atomic on this store by definition (asserted above)
      const contenders = Array.from({ length: 8 }, (_, i) => enc.encode(`writer-${i}-${'x'.repeat(i * 1000)}`));
      const results = await Promise.all(contenders.map((c) => io.writeIfAbsent(at('race/v2.json'), c)));
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.indexOf(true);
      expect(dec.decode(await io.read(at('race/v2.json')))).toBe(dec.decode(contenders[winner]!));
    });

    it('lists recursively by directory and by name prefix, as full locations', async () => {
      for (const f of ['ls/metadata/v1.metadata.json', 'ls/metadata/v2.metadata.json', 'ls/metadata/version-hint.text', 'ls/data/a/b/c.parquet', 'ls/data/d.parquet']) {
        await io.write(at(f), enc.encode(f));
      }
      expect((await io.list(at('ls'))).sort()).toEqual([
        listed('ls/data/a/b/c.parquet'),
        listed('ls/data/d.parquet'),
        listed('ls/metadata/v1.metadata.json'),
        listed('ls/metadata/v2.metadata.json'),
        listed('ls/metadata/version-hint.text'),
      ]);
      expect((await io.list(at('ls/metadata/v'))).sort()).toEqual([listed('ls/metadata/v1.metadata.json'), listed('ls/metadata/v2.metadata.json'), listed('ls/metadata/version-hint.text')]);
      expect((await io.list(at('ls/metadata/v1'))).sort()).toEqual([listed('ls/metadata/v1.metadata.json')]);
      expect(await io.list(at('ls/nothing-here'))).toEqual([]);
      // Every listed location reads back.
      for (const l of await io.list(at('ls/data'))) expect((await io.read(l)).length).toBeGreaterThan(0);
    });

    it('lists with last-modified times', async () => {
      const before = Date.now() - 60_000;
      for (const f of ['lt/a/x.parquet', 'lt/b.json']) await io.write(at(f), enc.encode(f));
      const listed_ = await io.listWithTimes!(at('lt'));
      expect(listed_.map((o) => o.location).sort()).toEqual([listed('lt/a/x.parquet'), listed('lt/b.json')]);
      for (const o of listed_) {
        expect(o.modifiedMs).toBeGreaterThan(before);
        expect(o.modifiedMs).toBeLessThan(Date.now() + 60_000);
      }
      expect(await io.listWithTimes!(at('lt/none/'))).toEqual([]);
    });

    it('lists the immediate children of a directory', async () => {
      for (const f of ['kids/ns1/.namespace.json', 'kids/ns2/t/metadata/v1.metadata.json', 'kids/top.txt']) await io.write(at(f), enc.encode('x'));
      const children = await listChildren(io, at('kids'));
      expect(children.files.sort()).toEqual([listed('kids/top.txt')]);
      expect(children.directories.sort()).toEqual(t.shallowCommonPrefixes ? [listed('kids/ns1')] : [listed('kids/ns1'), listed('kids/ns2')]);
      expect(await listChildren(io, at('kids/none'))).toEqual({ files: [], directories: [] });
    });

    it('deletes objects (absent is fine) and whole trees', async () => {
      await io.write(at('del/a'), enc.encode('a'));
      await io.delete(at('del/a'));
      expect(await io.exists(at('del/a'))).toBe(false);
      await io.delete(at('del/never-existed'));
      for (const f of ['tree/x/1', 'tree/x/y/2', 'tree/x/y/z/3', 'tree/keep']) await io.write(at(f), enc.encode(f));
      await io.deleteTree!(at('tree/x'));
      expect(await io.list(at('tree'))).toEqual([listed('tree/keep')]);
    });
  });
}
