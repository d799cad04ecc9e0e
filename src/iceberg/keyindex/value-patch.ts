/**
 * A change to a memory value index (memory-value-index.ts) as plain data — what a landed commit or
 * the rows read from the lake did to it — and the whole index as one patch on an empty one
 * (`from: 'image'`), the form a persisted value index would take, as index-patch.ts is for the key
 * index. Applied in this order: `dropped` slots (their entries and dead positions go), `files`,
 * `dead`, `sets`. Places are slot × 2^32 + position; an owner is its numeric KeyId, or NaN (none,
 * or a string owner listed in `ownerStrings`).
 */

/** Entries of one kind of value, side by side. */
interface ValueSets<V> {
  readonly values: readonly V[] | Float64Array;
  readonly places: Float64Array;
  readonly owners: Float64Array;
  /** String owners: [index in this list, owner]. */
  readonly ownerStrings: readonly (readonly [number, string])[];
}

export interface ValuePatch {
  readonly from: bigint | undefined | 'image';
  readonly to: bigint | undefined;
  /** Data files given a slot: [slot, path]. */
  readonly files: readonly (readonly [number, string])[];
  readonly dropped: readonly number[];
  /** Positions no live row is at any more, per slot (ascending). */
  readonly dead: readonly (readonly [number, Float64Array])[];
  readonly numberSets: ValueSets<number> & { readonly values: Float64Array };
  readonly stringSets: ValueSets<string> & { readonly values: readonly string[] };
  readonly nextSlot: number;
}

/** Collects entries into the two `ValueSets` of a patch. */
export class ValueSetsBuilder {
  private readonly numberValues: number[] = [];
  private readonly numberPlaces: number[] = [];
  private readonly numberOwners: number[] = [];
  private readonly numberOwnerStrings: [number, string][] = [];
  private readonly stringValues: string[] = [];
  private readonly stringPlaces: number[] = [];
  private readonly stringOwners: number[] = [];
  private readonly stringOwnerStrings: [number, string][] = [];

  add(value: number | string, place: number, owner: number | string | undefined): void {
    if (typeof value === 'number') {
      if (typeof owner === 'string') this.numberOwnerStrings.push([this.numberValues.length, owner]);
      this.numberValues.push(value);
      this.numberPlaces.push(place);
      this.numberOwners.push(typeof owner === 'number' ? owner : Number.NaN);
    } else {
      if (typeof owner === 'string') this.stringOwnerStrings.push([this.stringValues.length, owner]);
      this.stringValues.push(value);
      this.stringPlaces.push(place);
      this.stringOwners.push(typeof owner === 'number' ? owner : Number.NaN);
    }
  }

  get count(): number {
    return this.numberValues.length + this.stringValues.length;
  }

  sets(): Pick<ValuePatch, 'numberSets' | 'stringSets'> {
    return {
      numberSets: { values: Float64Array.from(this.numberValues), places: Float64Array.from(this.numberPlaces), owners: Float64Array.from(this.numberOwners), ownerStrings: this.numberOwnerStrings },
      stringSets: { values: this.stringValues, places: Float64Array.from(this.stringPlaces), owners: Float64Array.from(this.stringOwners), ownerStrings: this.stringOwnerStrings },
    };
  }
}

/** `each(value, place, owner)` for the entries of a patch's sets. */
export function forEachSet(p: Pick<ValuePatch, 'numberSets' | 'stringSets'>, each: (value: number | string, place: number, owner: number | string | undefined) => void): void {
  const visit = <V extends number | string>(s: ValueSets<V>, value: (i: number) => V): void => {
    const strings = new Map(s.ownerStrings);
    for (let i = 0; i < s.places.length; i++) {
      const o = s.owners[i]!;
      each(value(i), s.places[i]!, Number.isNaN(o) ? strings.get(i) : o);
    }
  };
  visit(p.numberSets, (i) => p.numberSets.values[i]!);
  visit(p.stringSets, (i) => p.stringSets.values[i]!);
}
