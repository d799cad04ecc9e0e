/**
 * A change to a memory key index (memory-key-index.ts) as plain data — what a landed commit, a
 * followed compaction or a catch-up from the lake did to it — and the whole index as one patch on an
 * empty one (`from: 'image'`). The index applies its own changes as patches, so what is persisted
 * (index-store.ts: an image, then a log of patches) replays to exactly the index in memory.
 *
 * Applied in this order: `dropped` slots (their runs, dead positions and hash entries go),
 * `files`, `hashDeletes`, `dead`, `runs` (a run's keys leave the hash), `numberSets` and
 * `stringSets`. Run keys and set keys of one patch are disjoint.
 *
 * Encoding (little-endian): u32 header length | header JSON | sections of f64 (run keys, number set
 * keys, number set places, string set places, number hash deletes, dead positions), their lengths in
 * the header. Places are packed slot × 2^32 + position (exact: slot < 2^21, position < 2^32).
 */
import { FloeError } from '../../util/errors.js';
import type { Run } from './sorted-runs.js';

const SUBSYSTEM = 'iceberg.keyindex';
export const TWO_32 = 4294967296;

export interface IndexPatch {
  /** The snapshot the patch applies on, or 'image' (on an empty index: the whole index). */
  readonly from: bigint | undefined | 'image';
  /** The snapshot the index holds afterwards. */
  readonly to: bigint | undefined;
  /** Data files given a slot: [slot, path]. */
  readonly files: readonly (readonly [number, string])[];
  readonly dropped: readonly number[];
  readonly hashDeletes: { readonly numbers: readonly number[]; readonly strings: readonly string[] };
  /** Positions no live key is at any more, per slot (ascending). */
  readonly dead: readonly (readonly [number, Float64Array])[];
  readonly runs: readonly Run[];
  /** Hash entries: keys and their places (packed), side by side. */
  readonly numberSets: { readonly keys: Float64Array; readonly places: Float64Array };
  readonly stringSets: { readonly keys: readonly string[]; readonly places: Float64Array };
  /** Live keys afterwards. */
  readonly count: number;
  /** The next slot to give a data file. */
  readonly nextSlot: number;
}

interface Header {
  from: string | null | 'image';
  to: string | null;
  files: (readonly [number, string])[];
  dropped: number[];
  deleteStrings: string[];
  deleteNumbers: number;
  dead: [number, number][];
  runs: [number, number, number][];
  numberSets: number;
  stringKeys: string[];
  count: number;
  nextSlot: number;
}

const ids = (v: bigint | undefined): string | null => (v === undefined ? null : v.toString());
const idOf = (v: string | null): bigint | undefined => (v === null ? undefined : BigInt(v));

/** The patch as bytes (index-store.ts frames and checksums them). */
export function encodePatch(p: IndexPatch): Uint8Array[] {
  const header: Header = {
    from: p.from === 'image' ? 'image' : ids(p.from),
    to: ids(p.to),
    files: [...p.files],
    dropped: [...p.dropped],
    deleteStrings: [...p.hashDeletes.strings],
    deleteNumbers: p.hashDeletes.numbers.length,
    dead: p.dead.map(([slot, positions]) => [slot, positions.length]),
    runs: p.runs.map((r) => [r.slot, r.start, r.keys.length]),
    numberSets: p.numberSets.keys.length,
    stringKeys: [...p.stringSets.keys],
    count: p.count,
    nextSlot: p.nextSlot,
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(json.length);
  const bytes = (a: Float64Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  return [
    length,
    json,
    // f64 sections start at a multiple of 8 within the record (index-store.ts pads it): decoding
    // then takes views, no copy
    new Uint8Array((8 - ((4 + json.length) % 8)) % 8),
    ...p.runs.map((r) => bytes(r.keys)),
    bytes(p.numberSets.keys),
    bytes(p.numberSets.places),
    bytes(p.stringSets.places),
    bytes(Float64Array.from(p.hashDeletes.numbers)),
    ...p.dead.map(([, positions]) => bytes(positions)),
  ];
}

/**
 * The patch `encodePatch` gave; `bytes` must start at a multiple of 8 in its buffer (index-store.ts
 * aligns records). Throws on a record that does not add up (a damaged file passes its checksum only
 * by a miracle, but a wrong layout version does not).
 */
export function decodePatch(bytes: Uint8Array): IndexPatch {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.readUInt32LE(0);
  const header = JSON.parse(view.subarray(4, 4 + headerLength).toString('utf8')) as Header;
  let at = 4 + headerLength;
  at += (8 - (at % 8)) % 8;
  if ((bytes.byteOffset + at) % 8 !== 0) throw new FloeError(SUBSYSTEM, 'internal', `a key index patch at byte ${bytes.byteOffset} is not 8-byte aligned (index-store.ts aligns every record)`);
  const take = (n: number): Float64Array => {
    if (at + 8 * n > bytes.byteLength) throw new Error(`a key index patch of ${bytes.byteLength} bytes ends inside its sections`);
    const a = new Float64Array(bytes.buffer, bytes.byteOffset + at, n);
    at += 8 * n;
    return a;
  };
  const runs: Run[] = header.runs.map(([slot, start, n]) => ({ slot, start, keys: take(n) }));
  const numberKeys = take(header.numberSets);
  const numberPlaces = take(header.numberSets);
  const stringPlaces = take(header.stringKeys.length);
  const deleteNumbers = Array.from(take(header.deleteNumbers));
  const dead: [number, Float64Array][] = header.dead.map(([slot, n]) => [slot, take(n)]);
  if (at !== bytes.byteLength) throw new Error(`a key index patch of ${bytes.byteLength} bytes holds ${at}`);
  return {
    from: header.from === 'image' ? 'image' : idOf(header.from),
    to: idOf(header.to),
    files: header.files,
    dropped: header.dropped,
    hashDeletes: { numbers: deleteNumbers, strings: header.deleteStrings },
    dead,
    runs,
    numberSets: { keys: numberKeys, places: numberPlaces },
    stringSets: { keys: header.stringKeys, places: stringPlaces },
    count: header.count,
    nextSlot: header.nextSlot,
  };
}
