/**
 * Both value indexes — in memory (memory-value-index.ts over value-chains.ts) and on disk
 * (sqlite-value-index.ts) — against a plain model, a multimap value → live places: random commits
 * add rows (several rows of one value, numeric and string values, with and without owners) and kill
 * positions by deletion vector (dead by position, whatever the value), and every value's live rows,
 * as `rowsOf` walks them (the memory one unlinking the dead entries on the way), equal the model's;
 * `entries` (and the memory one's `image`) hold the live rows only. Halfway, a memory index moves to
 * disk (`DiskValueIndex.fromMemory`, what the lifecycle does beyond the memory bound) and goes on.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DataFile } from '../../../src/iceberg/spec/data-file.js';
import { PositionBitmap } from '../../../src/iceberg/puffin/position-bitmap.js';
import { MemoryValueIndex } from '../../../src/iceberg/keyindex/memory-value-index.js';
import type { KeyId } from '../../../src/iceberg/keyindex/table-key.js';
import { DiskValueIndex } from '../../../src/iceberg/keyindex/sqlite-value-index.js';
import type { ValueIndex } from '../../../src/iceberg/keyindex/value-index.js';
import { prng } from '../../../src/util/prng.js';
import { useTempDirectory } from '../../support/temp-dir.js';

/** A data file as the index sees it: its path (the index keeps files by path and slot). */
const fileOf = (n: number): DataFile => ({ filePath: `s3://lake/t/data/f${n}.parquet` }) as DataFile;

const dir = useTempDirectory('floe-value-index-');

type Kind = 'memory' | 'disk' | 'memory, then disk';

describe.each<Kind>(['memory', 'disk', 'memory, then disk'])('value index: %s', (kind) => {
  it('follows commits of duplicate rows and deletion vectors exactly, as a multiset', () => {
    const random = prng(7);
    const int = (n: number) => Math.floor(random() * n);
    const path = join(dir(), `${kind.replaceAll(/\W+/g, '-')}.valueindex.sqlite`);
    let index: ValueIndex = kind === 'disk' ? DiskValueIndex.create(path, undefined) : new MemoryValueIndex(undefined);
    // model: place "file:pos" → [value, owner], live rows only
    const live = new Map<string, [KeyId, KeyId | undefined]>();
    const files: DataFile[] = [];
    const valueOf = (): KeyId => (int(2) === 0 ? int(12) : `row-${int(12)}`);
    for (let commit = 1; commit <= 60; commit++) {
      const file = fileOf(commit);
      files.push(file);
      const rows = Array.from({ length: 1 + int(40) }, (_, pos) => ({ value: valueOf(), pos, owner: int(3) === 0 ? undefined : int(2) === 0 ? pos + commit * 1000 : `k${commit}-${pos}` }));
      // this commit's DVs: a few live rows of earlier files
      const dead = new Map<string, PositionBitmap>();
      for (const place of [...live.keys()].filter(() => int(6) === 0)) {
        const [path, pos] = [place.slice(0, place.lastIndexOf(':')), Number(place.slice(place.lastIndexOf(':') + 1))];
        let b = dead.get(path);
        if (!b) dead.set(path, (b = new PositionBitmap()));
        b.add(pos);
        live.delete(place);
      }
      for (const r of rows) live.set(`${file.filePath}:${r.pos}`, [r.value, r.owner]);
      index.apply(
        {
          setCount: rows.length,
          forEachSet: (each) => rows.forEach((r) => each(r.value, file, r.pos, r.owner)),
          deadRows: [...dead].map(([filePath, positions]) => ({ filePath, positions })),
        },
        BigInt(commit),
      );
      expect(index.snapshotId).toBe(BigInt(commit));
      if (kind === 'memory, then disk' && commit === 30) {
        index = DiskValueIndex.fromMemory(path, index as MemoryValueIndex);
        expect(index.snapshotId).toBe(30n);
      }
      // a disk index counts live entries only (a memory one also its dead entries not yet unlinked)
      if (index instanceof DiskValueIndex) expect(index.size).toBe(live.size);
      // every value's live rows, walked (the walk unlinks dead entries: walk twice)
      for (let pass = 0; pass < 2; pass++) {
        for (let v = 0; v < 12; v++) {
          for (const value of [v, `row-${v}`]) {
            const found: string[] = [];
            index.rowsOf(value, (f, pos, owner) => {
              found.push(`${f.filePath}:${pos}`);
              expect(live.get(`${f.filePath}:${pos}`)).toEqual([value, owner]);
            });
            const expected = [...live].filter(([, [val]]) => val === value).map(([p]) => p);
            expect(found.sort()).toEqual(expected.sort());
          }
        }
      }
    }
    // stopping a walk early takes exactly one row (a keyless delete of one copy)
    const [someValue] = [...live.values()][0]!;
    let taken = 0;
    index.rowsOf(someValue, () => {
      taken++;
      return true;
    });
    expect(taken).toBe(1);
    expect([...index.entries()].map((e) => `${e.file.filePath}:${e.pos}`).sort()).toEqual([...live.keys()].sort());
    if (index instanceof MemoryValueIndex) {
      const image = index.image();
      expect(image.numberSets.places.length + image.stringSets.places.length).toBe(live.size);
    } else {
      // a working file, not a cache: dropping the index removes it
      expect(existsSync(path)).toBe(true);
      index.close();
      expect(existsSync(path)).toBe(false);
    }
  });
});
