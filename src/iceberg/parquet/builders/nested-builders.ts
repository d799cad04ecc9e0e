/**
 * Builders of nested columns. A struct value is an array of its fields' values in field order
 * (unknown fields included and ignored); a list is a JS array; a map is a `Map` or an array of
 * `[key, value]` pairs. Arrow list and map children are named `element` and `key_value`/`key`/`value`
 * (arrow-schema.ts), the names Java gives the Parquet groups.
 */
import * as arrow from 'apache-arrow';
import type { IcebergType, NestedField } from '../../spec/types.js';
import { arrowType } from '../arrow-schema.js';
import { BaseBuilder, INITIAL_SLOTS, badValue, grow, type ColumnBuilder } from './builder-base.js';

export class StructBuilder extends BaseBuilder {
  /** Index in the struct's field list of each child builder (unknown fields have none). */
  private readonly positions: number[];

  constructor(
    path: string,
    type: IcebergType & { kind: 'struct' },
    required: boolean,
    private readonly children: ColumnBuilder[],
  ) {
    super(path, type, arrowType(type, path), required);
    this.positions = [];
    type.fields.forEach((f, i) => {
      if (f.type.kind !== 'unknown') this.positions.push(i);
    });
  }

  protected appendValue(v: unknown): void {
    const fields = (this.type as { fields: NestedField[] }).fields;
    if (!Array.isArray(v) || v.length !== fields.length) badValue(this.path, this.type, `an array of ${fields.length} field values in field order`, v);
    for (let c = 0; c < this.children.length; c++) this.children[c]!.append(v[this.positions[c]!]);
    this.length++;
  }

  protected override appendNullSlot(): void {
    this.validity.setNull(this.length);
    for (const child of this.children) child.appendMasked();
    this.length++;
  }

  protected pushPlaceholder(): void {}

  byteSize(): number {
    let n = this.validity.bytes;
    for (const c of this.children) n += c.byteSize();
    return n;
  }

  finish(last = false): arrow.Data {
    const n = this.length;
    const v = this.takeValidity();
    const children = this.children.map((c) => c.finish(last));
    this.length = 0;
    return arrow.makeData({ type: this.arrowDataType as arrow.Struct, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, children });
  }
}

export class ListBuilder extends BaseBuilder {
  private offsets = new Int32Array(INITIAL_SLOTS + 1);

  constructor(
    path: string,
    type: IcebergType & { kind: 'list' },
    required: boolean,
    private readonly element: ColumnBuilder,
  ) {
    super(path, type, arrowType(type, path), required);
  }

  protected appendValue(v: unknown): void {
    if (!Array.isArray(v)) badValue(this.path, this.type, 'an array', v);
    for (const item of v) this.element.append(item);
    this.pushOffset();
  }

  private pushOffset(): void {
    const i = this.length;
    if (i + 1 >= this.offsets.length) this.offsets = grow(this.offsets, i + 2);
    this.offsets[i + 1] = this.element.length;
    this.length++;
  }

  protected override appendNullSlot(): void {
    this.validity.setNull(this.length);
    this.pushOffset();
  }

  protected pushPlaceholder(): void {}

  byteSize(): number {
    return this.length * 4 + this.validity.bytes + this.element.byteSize();
  }

  finish(last = false): arrow.Data {
    const n = this.length;
    const valueOffsets = this.offsets.subarray(0, n + 1);
    const v = this.takeValidity();
    const child = this.element.finish(last);
    this.offsets = new Int32Array(last ? 1 : INITIAL_SLOTS + 1);
    this.length = 0;
    return arrow.makeData({ type: this.arrowDataType as arrow.List, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, valueOffsets, child });
  }
}

export class MapBuilder extends BaseBuilder {
  private offsets = new Int32Array(INITIAL_SLOTS + 1);
  private entries = 0;

  constructor(
    path: string,
    type: IcebergType & { kind: 'map' },
    required: boolean,
    private readonly key: ColumnBuilder,
    private readonly value: ColumnBuilder,
  ) {
    super(path, type, arrowType(type, path), required);
  }

  protected appendValue(v: unknown): void {
    const pairs: Iterable<unknown> = v instanceof Map ? v.entries() : Array.isArray(v) ? v : badValue(this.path, this.type, 'a Map or an array of [key, value] pairs', v);
    for (const pair of pairs) {
      if (!Array.isArray(pair) || pair.length !== 2) badValue(this.path, this.type, 'a [key, value] pair', pair);
      if (pair[0] === null || pair[0] === undefined) badValue(this.path, this.type, 'a non-null map key', pair[0]);
      this.key.append(pair[0]);
      this.value.append(pair[1]);
      this.entries++;
    }
    this.pushOffset();
  }

  private pushOffset(): void {
    const i = this.length;
    if (i + 1 >= this.offsets.length) this.offsets = grow(this.offsets, i + 2);
    this.offsets[i + 1] = this.entries;
    this.length++;
  }

  protected override appendNullSlot(): void {
    this.validity.setNull(this.length);
    this.pushOffset();
  }

  protected pushPlaceholder(): void {}

  byteSize(): number {
    return this.length * 4 + this.validity.bytes + this.key.byteSize() + this.value.byteSize();
  }

  finish(last = false): arrow.Data {
    const n = this.length;
    const valueOffsets = this.offsets.subarray(0, n + 1);
    const v = this.takeValidity();
    const mapType = this.arrowDataType as arrow.Map_;
    const entryType = mapType.children[0]!.type as arrow.Struct;
    const child = arrow.makeData({ type: entryType, length: this.entries, nullCount: 0, children: [this.key.finish(last), this.value.finish(last)] });
    this.offsets = new Int32Array(last ? 1 : INITIAL_SLOTS + 1);
    this.entries = 0;
    this.length = 0;
    return arrow.makeData({ type: mapType, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, valueOffsets, child });
  }
}
