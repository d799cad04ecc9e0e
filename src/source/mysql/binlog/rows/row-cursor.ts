/**
 * Where a binlog row decoder stands: the event (or inflated rows) buffer and the position in it,
 * one per decode and advanced by every column reader (column-readers.ts, binary-decimal.ts,
 * temporal-readers.ts), and the shape of such a reader.
 */
import type { Value } from '../../../../model/values.js';

/** The position in the event (or inflated rows) buffer; one per decode, mutated by the readers. */
export interface Cursor {
  buf: Buffer;
  pos: number;
}

export type ColumnReader = (c: Cursor) => Value;
