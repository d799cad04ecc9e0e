/**
 * A value index in memory (value-index.ts): value → the places of the live rows holding it, as
 * chains of entries (value-chains.ts), with the data files by slot and, per slot, the positions no
 * live row is at any more (`dead`) — as in the key index (memory-key-index.ts): a row goes dead by
 * position, whatever deleted it, so an index never needs to know a deleted row's value. A walk of a
 * value's chain unlinks the dead entries it meets, and an image (`image`) leaves them out.
 *
 * Every change is a patch (value-patch.ts) applied by `applyPatch` — plain data, the form a persisted
 * value index would replay; `image` is the whole index as one. Slots are never reused.
 */
import type { DataFile } from '../spec/data-file.js';
import { PositionBitmap } from '../puffin/position-bitmap.js';
import type { KeyId } from './table-key.js';
import { TWO_32 } from './index-patch.js';
import { ValueChains } from './value-chains.js';
import type { ValueEntry, ValueIndex, ValueIndexDelta } from './value-index.js';
import { forEachSet, ValueSetsBuilder, type ValuePatch } from './value-patch.js';

export class MemoryValueIndex implements ValueIndex {
  readonly kind = 'memory' as const;
  snapshotId: bigint | undefined;
  private readonly files = new Map<number, DataFile>();
  private readonly paths = new Map<number, string>();
  private readonly slots = new Map<string, number>();
  private nextSlot = 0;
  private readonly dead = new Map<number, PositionBitmap>();
  private readonly chains = new ValueChains();

  constructor(snapshotId: bigint | undefined) {
    this.snapshotId = snapshotId;
  }

  get size(): number {
    return this.chains.size;
  }

  /** About how many bytes the index holds. */
  get memoryBytes(): number {
    return this.chains.memoryBytes;
  }

  rowsOf(value: KeyId, each: (file: DataFile, pos: number, owner: KeyId | undefined) => boolean | void): void {
    this.chains.walk(value, (place, owner) => {
      const slot = Math.floor(place / TWO_32);
      const pos = place % TWO_32;
      const file = this.files.get(slot);
      if (!file || this.dead.get(slot)?.has(pos)) return 'drop';
      return each(file, pos, owner) === true ? 'stop' : 'keep';
    });
  }

  apply(delta: ValueIndexDelta, snapshotId: bigint | undefined): void {
    const files: [number, string][] = [];
    let nextSlot = this.nextSlot;
    const slotFor = new Map<DataFile, number>();
    const sets = new ValueSetsBuilder();
    delta.forEachSet((value, file, pos, owner) => {
      let slot = slotFor.get(file) ?? this.slots.get(file.filePath);
      if (slot === undefined) files.push([(slot = nextSlot++), file.filePath]);
      slotFor.set(file, slot);
      sets.add(value, slot * TWO_32 + pos, owner);
    });
    // a data file the index holds no row of (every row's value null, for a foreign key) has no slot: nothing to mark
    const dead = delta.deadRows.filter((d) => this.slots.has(d.filePath)).map((d) => [this.slots.get(d.filePath)!, d.positions.sortedNumbers()] as const);
    this.applyPatch({ from: this.snapshotId, to: snapshotId, files, dropped: [], dead, ...sets.sets(), nextSlot });
    for (const file of slotFor.keys()) this.useFile(file);
  }

  /** Rows of data files read from the lake (a build), or what a catch-up found committed since (`dropped`, `dead`, `to`). */
  addRows(entries: readonly ValueEntry[], change: { dropped?: readonly string[]; dead?: readonly (readonly [string, Float64Array])[]; to?: bigint | undefined } = {}): void {
    this.applyEntries(entries, { dropped: change.dropped ?? [], dead: change.dead ?? [], to: 'to' in change ? change.to : this.snapshotId });
  }

  private applyEntries(entries: readonly ValueEntry[], change: { dropped: readonly string[]; dead?: readonly (readonly [string, Float64Array])[]; to: bigint | undefined }): void {
    this.applyPatch(this.entriesPatch(entries, change));
    for (const e of entries) this.useFile(e.file);
  }

  private entriesPatch(entries: readonly ValueEntry[], change: { dropped: readonly string[]; dead?: readonly (readonly [string, Float64Array])[]; to: bigint | undefined }): ValuePatch {
    const files: [number, string][] = [];
    let nextSlot = this.nextSlot;
    const slotOf = new Map<string, number>();
    const sets = new ValueSetsBuilder();
    for (const e of entries) {
      const path = e.file.filePath;
      let slot = slotOf.get(path) ?? this.slots.get(path);
      if (slot === undefined) files.push([(slot = nextSlot++), path]);
      slotOf.set(path, slot);
      sets.add(e.value, slot * TWO_32 + e.pos, e.owner);
    }
    const dropped = change.dropped.map((p) => this.slots.get(p)).filter((s): s is number => s !== undefined);
    const dead = (change.dead ?? []).filter(([path]) => this.slots.has(path)).map(([path, positions]) => [this.slots.get(path)!, positions] as const);
    return { from: this.snapshotId, to: change.to, files, dropped, dead, ...sets.sets(), nextSlot };
  }

  /** Applies a patch (value-patch.ts for the order). */
  applyPatch(p: ValuePatch): void {
    if (p.dropped.length > 0) {
      const dropped = new Set(p.dropped);
      this.chains.removeWhere((place) => dropped.has(Math.floor(place / TWO_32)));
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
    for (const [slot, positions] of p.dead) {
      let b = this.dead.get(slot);
      if (!b) this.dead.set(slot, (b = new PositionBitmap()));
      for (let i = 0; i < positions.length; i++) b.add(positions[i]!);
    }
    forEachSet(p, (value, place, owner) => this.chains.add(value, place, owner));
    this.nextSlot = p.nextSlot;
    this.snapshotId = p.to;
  }

  /** Gives a slot its data file: a patch names a file by path, the DataFile comes from the table. */
  private useFile(file: DataFile): void {
    const slot = this.slots.get(file.filePath);
    if (slot !== undefined) this.files.set(slot, file);
  }

  /** The whole index as one patch on an empty index (its live entries only). */
  image(): ValuePatch {
    const sets = new ValueSetsBuilder();
    this.chains.forEach((value, place, owner) => {
      const slot = Math.floor(place / TWO_32);
      if (this.paths.has(slot) && !this.dead.get(slot)?.has(place % TWO_32)) sets.add(value, place, owner);
    });
    return { from: 'image', to: this.snapshotId, files: [...this.paths], dropped: [], dead: [], ...sets.sets(), nextSlot: this.nextSlot };
  }

  *entries(): Iterable<ValueEntry> {
    const out: ValueEntry[] = [];
    this.forEachLive((value, file, pos, owner) => out.push({ value, file, pos, owner }));
    yield* out;
  }

  /** `each` for every live entry, without collecting them (what moving the index to disk reads). */
  forEachLive(each: (value: KeyId, file: DataFile, pos: number, owner: KeyId | undefined) => void): void {
    this.chains.forEach((value, place, owner) => {
      const slot = Math.floor(place / TWO_32);
      const pos = place % TWO_32;
      const file = this.files.get(slot);
      if (file && !this.dead.get(slot)?.has(pos)) each(value, file, pos, owner);
    });
  }

  close(): void {}
}
