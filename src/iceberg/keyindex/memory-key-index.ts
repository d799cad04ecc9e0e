/**
 * The key index in memory (key-index.ts): key → (data file, row position) of every live row of a
 * table, in two parts.
 *
 * - Runs (sorted-runs.ts): stretches of ascending numeric keys at consecutive positions of one data
 *   file, 8 bytes per key, the position implied. A snapshotted table is almost all runs, and so is
 *   what floe's compaction copies from them.
 * - A hash (key-locations.ts: 16-byte slots of a typed-array table for numeric keys, a Map for string
 *   keys) for every other live row: rows written in change order by CDC checkpoints, string keys.
 *   A key in the hash is there because its row moved after its run was made: the hash entry wins.
 *
 * Rows go dead rather than being taken out: `dead` holds, per data file, the positions no live key
 * is at any more — the positions floe's deletion vectors removed, which a commit's delta lists
 * (`KeyIndexDelta.deadRows`) and a catch-up reads from the lake's DVs. A key is live at the place
 * the hash gives (or, not in the hash, its run gives) unless that place is dead or its file gone; a
 * dead hash entry means the key has no live row (its run's row went dead when it moved).
 *
 * Every change is a patch (index-patch.ts) applied by `applyPatch`; `onPatch` hears each, so that
 * what is persisted (index-store.ts) replays to this very index. Slots are never reused: a patch
 * that names a slot means that file only.
 */
import { FloeError } from '../../util/errors.js';
import type { DataFile } from '../spec/data-file.js';
import { PositionBitmap } from '../puffin/position-bitmap.js';
import type { IndexedRow, KeyIndex, KeyIndexDelta } from './key-index.js';
import { KeyLocations } from './key-locations.js';
import { TWO_32, type IndexPatch } from './index-patch.js';
import { SortedRuns } from './sorted-runs.js';
import { countKeys, fileKeys, keysPatch, put, type FileKeys } from './keys-patch.js';
import type { KeyId } from './table-key.js';

const SUBSYSTEM = 'iceberg.keyindex';
/** Bytes a hash entry takes, about (key-locations.ts at its load factor), for `memoryBytes`. */
const HASH_ENTRY_BYTES = 34;

export class MemoryKeyIndex implements KeyIndex {
  readonly kind = 'memory' as const;
  snapshotId: bigint | undefined;
  /** Slot → data file (a loaded index: given once the head's files are known, `useFile`). */
  private readonly files = new Map<number, DataFile>();
  private readonly paths = new Map<number, string>();
  private readonly slots = new Map<string, number>();
  private nextSlot = 0;
  private readonly runs = new SortedRuns();
  private readonly hash = new KeyLocations();
  private readonly dead = new Map<number, PositionBitmap>();
  private count = 0;
  /** Hears every patch applied (persistence, index-store.ts). */
  onPatch: ((patch: IndexPatch) => void) | undefined;
  /** The slot and dead set `live` looked at last (a checkpoint's lookups cluster in a few files). */
  private lastDeadSlot = -1;
  private lastDead: PositionBitmap | undefined;

  constructor(snapshotId: bigint | undefined) {
    this.snapshotId = snapshotId;
  }

  get size(): number {
    return this.count;
  }

  /** About how many bytes the index holds: 8 per run key, a hash entry's worth per other entry. */
  get memoryBytes(): number {
    return 8 * this.runs.size + HASH_ENTRY_BYTES * this.hash.size;
  }

  foundPos = 0;

  find(k: KeyId): DataFile | undefined {
    const hash = this.hash;
    if (hash.find(k)) return this.live(hash.foundSlot, hash.foundPos);
    const runs = this.runs;
    if (typeof k !== 'number' || !runs.find(k)) return undefined;
    return this.live(runs.foundSlot, runs.foundPos);
  }

  get(k: KeyId): IndexedRow | undefined {
    const file = this.find(k);
    return file ? { file, pos: this.foundPos } : undefined;
  }

  /** The file at `slot` when `pos` is live there (then left in `foundPos`). */
  private live(slot: number, pos: number): DataFile | undefined {
    const file = this.files.get(slot);
    if (!file) return undefined;
    if (slot !== this.lastDeadSlot) {
      this.lastDeadSlot = slot;
      this.lastDead = this.dead.get(slot);
    }
    if (this.lastDead?.has(pos)) return undefined;
    this.foundPos = pos;
    return file;
  }

  /** A direct change (tests, a disk index's entries): `k` is at (file, pos) — a hash entry. */
  set(k: KeyId, file: DataFile, pos: number): void {
    const had = this.find(k) !== undefined;
    let slot = this.slots.get(file.filePath);
    const files: [number, string][] = [];
    if (slot === undefined) files.push([(slot = this.nextSlot), file.filePath]);
    const place = Float64Array.of(slot * TWO_32 + pos);
    const numeric = typeof k === 'number';
    this.applyPatch({
      from: this.snapshotId,
      to: this.snapshotId,
      files,
      dropped: [],
      hashDeletes: { numbers: [], strings: [] },
      dead: [],
      runs: [],
      numberSets: { keys: numeric ? Float64Array.of(k) : new Float64Array(0), places: numeric ? place : new Float64Array(0) },
      stringSets: { keys: numeric ? [] : [k], places: numeric ? new Float64Array(0) : place },
      count: this.count + (had ? 0 : 1),
      nextSlot: Math.max(this.nextSlot, slot + 1),
    });
    this.files.set(slot, file);
  }

  /** A direct change: `k` has no live row any more. */
  delete(k: KeyId): void {
    const file = this.find(k);
    if (!file) return;
    const slot = this.slotOf(file.filePath);
    const numbers = typeof k === 'number' ? [k] : [];
    const strings = typeof k === 'string' ? [k] : [];
    this.applyPatch(this.patchOf([], { hashDeletes: { numbers, strings }, dead: [[slot, Float64Array.of(this.foundPos)]], count: this.count - 1, to: this.snapshotId }));
  }

  apply(delta: KeyIndexDelta, snapshotId: bigint | undefined): void {
    // the places the commit's DVs removed; a delta that does not list them: where its keys were
    const dead = new Map<number, PositionBitmap>();
    const deadAt = (path: string): PositionBitmap => {
      const slot = this.slotOf(path);
      let b = dead.get(slot);
      if (!b) dead.set(slot, (b = new PositionBitmap()));
      return b;
    };
    if (delta.deadRows) for (const { filePath, positions } of delta.deadRows) deadAt(filePath).addAll(positions.sortedNumbers());
    else {
      for (const k of delta.deleted) {
        const file = this.find(k);
        if (file) deadAt(file.filePath).add(this.foundPos);
      }
    }
    const numbers: number[] = [];
    const strings: string[] = [];
    for (const k of delta.deleted) {
      if (typeof k === 'number') numbers.push(k);
      else strings.push(k);
    }
    const byFile = new Map<DataFile, FileKeys>();
    delta.forEachSet((k, file, pos) => put(this.fileKeys(byFile, file), k, pos));
    const deadList = [...dead].map(([slot, b]) => [slot, b.sortedNumbers()] as const);
    this.applyPatch(this.patchOf([...byFile.values()], { hashDeletes: { numbers, strings }, dead: deadList, count: this.count + delta.setCount - delta.deleted.length, to: snapshotId }));
    for (const file of byFile.keys()) this.useFile(file);
  }

  rewrite(moved: readonly (readonly [KeyId, DataFile, number])[], removed: readonly string[], _added: readonly DataFile[], snapshotId: bigint): void {
    const byFile = new Map<DataFile, FileKeys>();
    for (const [k, file, pos] of moved) put(this.fileKeys(byFile, file), k, pos);
    const dropped = removed.map((p) => this.slots.get(p)).filter((s): s is number => s !== undefined);
    this.applyPatch(this.patchOf([...byFile.values()], { hashDeletes: { numbers: [], strings: [] }, dead: [], count: this.count, to: snapshotId, dropped }));
    for (const file of byFile.keys()) this.useFile(file);
  }

  /** Rows of one data file read from the lake (a build): `numbers[p]` the key at position p, NaN for none. */
  addFileRows(file: DataFile, numbers: Float64Array, strings: readonly (readonly [string, number])[] = []): void {
    this.applyPatch(this.patchOf([{ file, numbers, strings: strings.map(([k, p]) => [k, p] as [string, number]) }], { hashDeletes: { numbers: [], strings: [] }, dead: [], count: this.count + countKeys(numbers) + strings.length, to: this.snapshotId }));
    this.useFile(file);
  }

  /**
   * What the lake committed since the index's snapshot (key-index-catch-up.ts), as one patch: the
   * slots of `dropped` files go, `dead` positions (by data file path; a file the index does not know
   * holds no key of it) go dead, the rows of `files` are set; the index then holds `to`, `count` live keys.
   */
  catchUp(change: { dropped: readonly string[]; dead: readonly (readonly [string, Float64Array])[]; files: readonly { file: DataFile; numbers: Float64Array; strings: [string, number][] }[]; to: bigint | undefined; count: number }): void {
    const dropped = change.dropped.map((p) => this.slots.get(p)).filter((s): s is number => s !== undefined);
    const dead = change.dead.filter(([path]) => this.slots.has(path)).map(([path, positions]) => [this.slots.get(path)!, positions] as const);
    this.applyPatch(this.patchOf([...change.files], { hashDeletes: { numbers: [], strings: [] }, dead, count: change.count, to: change.to, dropped }));
    for (const { file } of change.files) this.useFile(file);
  }

  private fileKeys(byFile: Map<DataFile, FileKeys>, file: DataFile): FileKeys {
    let keys = byFile.get(file);
    if (!keys) byFile.set(file, (keys = fileKeys(file)));
    return keys;
  }

  private slotOf(path: string): number {
    const slot = this.slots.get(path);
    if (slot === undefined) throw new FloeError(SUBSYSTEM, 'internal', `key index: data file ${path} has no slot (its rows were never set)`);
    return slot;
  }

  /** The patch that sets the keys of `files` besides `rest` (keys-patch.ts). */
  private patchOf(files: readonly FileKeys[], rest: Pick<IndexPatch, 'hashDeletes' | 'dead' | 'count' | 'to'> & { dropped?: readonly number[] }): IndexPatch {
    return keysPatch({ slots: this.slots, nextSlot: this.nextSlot, runs: this.runs, snapshotId: this.snapshotId }, files, rest);
  }

  /** Applies a patch (index-patch.ts for the order), then tells `onPatch`. */
  applyPatch(p: IndexPatch): void {
    const hash = this.hash;
    if (p.dropped.length > 0) {
      const dropped = new Set(p.dropped);
      this.runs.dropSlots(dropped);
      const stale: KeyId[] = [];
      hash.forEach((k, slot) => {
        if (dropped.has(slot)) stale.push(k);
      });
      for (const k of stale) hash.delete(k);
      for (const slot of dropped) {
        this.dead.delete(slot);
        this.files.delete(slot);
        const path = this.paths.get(slot);
        this.paths.delete(slot);
        if (path !== undefined) this.slots.delete(path);
      }
    }
    for (const [slot, path] of p.files) {
      this.paths.set(slot, path);
      this.slots.set(path, slot);
    }
    for (const k of p.hashDeletes.numbers) hash.delete(k);
    for (const k of p.hashDeletes.strings) hash.delete(k);
    for (const [slot, positions] of p.dead) {
      let b = this.dead.get(slot);
      if (!b) this.dead.set(slot, (b = new PositionBitmap()));
      for (let i = 0; i < positions.length; i++) b.add(positions[i]!);
    }
    for (const run of p.runs) {
      if (hash.size > 0) for (let i = 0; i < run.keys.length; i++) hash.delete(run.keys[i]!);
      this.runs.add(run);
    }
    const { keys, places } = p.numberSets;
    hash.reserve(keys.length);
    for (let i = 0; i < keys.length; i++) hash.set(keys[i]!, Math.floor(places[i]! / TWO_32), places[i]! % TWO_32);
    const s = p.stringSets;
    for (let i = 0; i < s.keys.length; i++) hash.set(s.keys[i]!, Math.floor(s.places[i]! / TWO_32), s.places[i]! % TWO_32);
    this.count = p.count;
    this.nextSlot = p.nextSlot;
    this.snapshotId = p.to;
    this.lastDeadSlot = -1;
    this.onPatch?.(p);
  }

  /** Gives the slots' data files: a patch names a file by path, the DataFile comes from the table. */
  useFile(file: DataFile): void {
    const slot = this.slots.get(file.filePath);
    if (slot !== undefined) this.files.set(slot, file);
  }

  /** The paths of slots without a DataFile yet (`useFile`): after a load, those the table did not give. */
  unresolvedPaths(): string[] {
    return [...this.paths].filter(([slot]) => !this.files.has(slot)).map(([, path]) => path);
  }

  /** The whole index as one patch on an empty index (index-store.ts writes it as the image). */
  image(): IndexPatch {
    const numberKeys: number[] = [];
    const numberPlaces: number[] = [];
    const stringKeys: string[] = [];
    const stringPlaces: number[] = [];
    this.hash.forEach((k, slot, pos) => {
      if (typeof k === 'number') {
        numberKeys.push(k);
        numberPlaces.push(slot * TWO_32 + pos);
      } else {
        stringKeys.push(k);
        stringPlaces.push(slot * TWO_32 + pos);
      }
    });
    return {
      from: 'image',
      to: this.snapshotId,
      files: [...this.paths],
      dropped: [],
      hashDeletes: { numbers: [], strings: [] },
      dead: [...this.dead].map(([slot, b]) => [slot, b.sortedNumbers()] as const),
      runs: [...this.runs.all()],
      numberSets: { keys: Float64Array.from(numberKeys), places: Float64Array.from(numberPlaces) },
      stringSets: { keys: stringKeys, places: Float64Array.from(stringPlaces) },
      count: this.count,
      nextSlot: this.nextSlot,
    };
  }

  /** Every live entry (spilling to disk, tests): the hash's, then the runs' keys the hash does not hold. */
  *entries(): Iterable<readonly [KeyId, DataFile, number]> {
    const out: [KeyId, number, number][] = [];
    this.hash.forEach((k, slot, pos) => out.push([k, slot, pos]));
    for (const [k, slot, pos] of out) {
      const file = this.live(slot, pos);
      if (file) yield [k, file, pos];
    }
    for (const run of this.runs.all()) {
      for (let i = 0; i < run.keys.length; i++) {
        const k = run.keys[i]!;
        if (this.hash.find(k)) continue;
        const file = this.live(run.slot, run.start + i);
        if (file) yield [k, file, run.start + i];
      }
    }
  }

  close(): void {}
}
