/**
 * The shared machinery of the column builders (see ../column-builders.ts): the builder contract, a
 * growable validity bitmap, typed-array growth, value checks with messages that name the column, and
 * the base classes that handle nulls (a null under a null parent struct counts as null for stats, as
 * Parquet definition levels do).
 */
import * as arrow from 'apache-arrow';
import { FloeError } from '../../../util/errors.js';
import type { IcebergType, PrimitiveType } from '../../spec/types.js';
import { arrowType, describeType } from '../arrow-schema.js';
import type { FieldStats } from '../field-stats.js';

export const SUBSYSTEM = 'iceberg.parquet';

export interface ColumnBuilder {
  readonly length: number;
  /** Appends a value of the column's type; null is allowed only for optional columns. */
  append(value: unknown): void;
  /** Appends a null slot under a null parent struct (allowed for required children too). */
  appendMasked(): void;
  /** Approximate bytes held (Arrow buffer sizes), for batch and file size estimates. */
  byteSize(): number;
  /**
   * Hands out the buffered values as Arrow data and starts a new batch — or, when `last`, ends the
   * builder: it allocates no buffers for a next batch (a file's last batch; a partitioned checkpoint
   * closes thousands of files).
   */
  finish(last?: boolean): arrow.Data;
}

function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (typeof v === 'bigint') return `${v}n (bigint)`;
  if (v instanceof Uint8Array) return `${v.length} bytes`;
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === 'string') return `${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v)} (string)`;
  if (typeof v === 'object') return 'an object';
  return `${String(v)} (${typeof v})`;
}

export function badValue(path: string, type: IcebergType, expected: string, v: unknown): never {
  throw new FloeError(SUBSYSTEM, 'invalid-argument', `column ${path} (${describeType(type)}): expected ${expected}, found ${describeValue(v)}`);
}

/** Growable validity bitmap; allocated on the first null. */
class Validity {
  private bits: Uint8Array | undefined;
  nullCount = 0;

  setNull(index: number): void {
    const byte = index >> 3;
    if (!this.bits || byte >= this.bits.length) {
      // Slots before the first null were all valid: new regions start as ones.
      const next = new Uint8Array(Math.max(64, byte * 2 + 8)).fill(0xff);
      if (this.bits) next.set(this.bits);
      this.bits = next;
    }
    this.bits[byte]! &= ~(1 << (index & 7));
    this.nullCount++;
  }

  /** Bitmap for `length` slots (undefined when no nulls) and reset. */
  take(length: number): { nullBitmap: Uint8Array | undefined; nullCount: number } {
    let nullBitmap: Uint8Array | undefined;
    if (this.bits) {
      const size = (length + 7) >> 3;
      nullBitmap = new Uint8Array(size).fill(0xff);
      nullBitmap.set(this.bits.subarray(0, Math.min(size, this.bits.length)));
      // Bits past `length` are ignored by Arrow; keep them zero all the same.
      const tail = length & 7;
      if (tail !== 0) nullBitmap[size - 1]! &= (1 << tail) - 1;
    }
    const out = { nullBitmap, nullCount: this.nullCount };
    this.bits = undefined;
    this.nullCount = 0;
    return out;
  }

  get bytes(): number {
    return this.bits ? this.bits.length : 0;
  }
}

/**
 * First capacity of a builder's buffers (values, and bytes of variable-width data), and the least
 * one after a batch; they double as values arrive. Small, because a partitioned table opens one
 * builder per column per partition (thousands for a `day` or `hour` transform), most of which hold
 * a few rows; a large column grows to its batch size in a few doublings, and later batches start at
 * the size of the previous one.
 */
export const INITIAL_SLOTS = 32;
export const INITIAL_BYTES = 512;

export type TypedArray = Int32Array | Float32Array | Float64Array | BigInt64Array | Uint8Array | Uint32Array;

export function grow<T extends TypedArray>(arr: T, minLength: number): T {
  if (minLength <= arr.length) return arr;
  const Ctor = arr.constructor as new (n: number) => T;
  // Small arrays grow fourfold: most builders of a partitioned checkpoint stay small, and each growth
  // is an allocation and a copy.
  const next = new Ctor(Math.max(minLength, arr.length < 4096 ? arr.length * 4 : arr.length * 2, 16));
  next.set(arr as never);
  return next;
}

export abstract class BaseBuilder implements ColumnBuilder {
  length = 0;
  protected validity = new Validity();

  constructor(
    readonly path: string,
    readonly type: IcebergType,
    readonly arrowDataType: arrow.DataType,
    readonly required: boolean,
  ) {}

  append(value: unknown): void {
    if (value === null || value === undefined) {
      if (this.required) {
        throw new FloeError(SUBSYSTEM, 'invalid-argument', `column ${this.path} is required but the value is ${value === null ? 'null' : 'missing'}; supply a value (or the field's write-default)`);
      }
      this.appendNullSlot();
      return;
    }
    this.appendValue(value);
  }

  appendMasked(): void {
    this.appendNullSlot();
  }

  protected appendNullSlot(): void {
    this.validity.setNull(this.length);
    this.pushPlaceholder();
    this.length++;
  }

  protected abstract appendValue(value: unknown): void;
  /** Fills the slot of a null with a zero value / empty entry. */
  protected abstract pushPlaceholder(): void;
  abstract byteSize(): number;
  abstract finish(last?: boolean): arrow.Data;

  protected takeValidity(): { nullBitmap: Uint8Array | undefined; nullCount: number } {
    return this.validity.take(this.length);
  }
}

export abstract class PrimitiveBuilder extends BaseBuilder {
  constructor(
    path: string,
    type: PrimitiveType,
    required: boolean,
    protected readonly stats: FieldStats | undefined,
  ) {
    super(path, type, arrowType(type, path), required);
  }

  protected override appendNullSlot(): void {
    if (this.stats) {
      this.stats.valueCount++;
      this.stats.nullCount++;
    }
    super.appendNullSlot();
  }
}
