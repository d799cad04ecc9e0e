/**
 * Per-column statistics gathered while values are appended, turned into the manifest metrics of a
 * data file (spec "Manifests" → data_file 109/110/137/125/128):
 *
 * - value count includes nulls and NaNs; null count counts a value as null also when an enclosing
 *   struct is null (Parquet definition levels, which Java's footer metrics read);
 * - NaN counts exist for float and double columns only;
 * - bounds cover non-null, non-NaN values, with -0.0 < +0.0 (Java `Double.compare`); they are encoded
 *   in the binary single-value form of the column's type (Appendix D); strings and binaries are
 *   truncated per the metrics mode (`bound-truncation.ts`).
 *
 * As in Java (`ParquetMetrics.MetricsVisitor.list/map`), fields inside lists and maps get no stats at
 * all; the builders simply receive no `FieldStats` for them.
 */
import { toBinary, unscaledToBytes } from '../spec/single-value.js';
import type { PrimitiveType } from '../spec/types.js';
import { truncateBinaryMax, truncateBinaryMin, truncateStringMax, truncateStringMin } from './bound-truncation.js';
import type { MetricsMode } from './metrics-config.js';

/** Min/max in the form the builder has at hand: decimals as unscaled bigint, uuid/fixed/binary as bytes. */
export type StatValue = boolean | number | bigint | string | Uint8Array;

export class FieldStats {
  valueCount = 0;
  nullCount = 0;
  nanCount = 0;
  min: StatValue | undefined = undefined;
  max: StatValue | undefined = undefined;

  constructor(
    readonly fieldId: number,
    readonly type: PrimitiveType,
    readonly mode: MetricsMode,
  ) {}

  /** Whether bounds are wanted at all (modes truncate and full). */
  get tracksBounds(): boolean {
    return this.mode.kind === 'truncate' || this.mode.kind === 'full';
  }

  lowerBound(): Uint8Array | undefined {
    return this.min === undefined ? undefined : this.encode(this.min, 'lower');
  }

  upperBound(): Uint8Array | undefined {
    return this.max === undefined ? undefined : this.encode(this.max, 'upper');
  }

  private encode(v: StatValue, which: 'lower' | 'upper'): Uint8Array | undefined {
    const length = this.mode.kind === 'truncate' ? this.mode.length : Infinity;
    switch (this.type.kind) {
      case 'string': {
        const s = v as string;
        const t = length === Infinity ? s : which === 'lower' ? truncateStringMin(s, length) : truncateStringMax(s, length);
        return t === null ? undefined : toBinary(this.type, t);
      }
      case 'binary': {
        // Java truncates binary only; fixed and uuid keep their full length (ParquetMetrics).
        const b = v as Uint8Array;
        const t = length === Infinity ? b : which === 'lower' ? truncateBinaryMin(b, length) : truncateBinaryMax(b, length);
        return t === null ? undefined : t.slice();
      }
      case 'uuid':
      case 'fixed':
        return (v as Uint8Array).slice();
      case 'decimal':
        return unscaledToBytes(v as bigint);
      default:
        return toBinary(this.type, v as Exclude<StatValue, Uint8Array>);
    }
  }
}

/** Metrics maps of one file, keyed by field id (the shape of `DataFile`'s optional maps). */
export interface ColumnMetrics {
  valueCounts: Map<number, bigint>;
  nullValueCounts: Map<number, bigint>;
  nanValueCounts: Map<number, bigint>;
  lowerBounds: Map<number, Uint8Array>;
  upperBounds: Map<number, Uint8Array>;
}

/** Collects the metrics maps from the stats of every tracked column. */
export function metricsFromStats(stats: readonly FieldStats[]): ColumnMetrics {
  const out: ColumnMetrics = {
    valueCounts: new Map(),
    nullValueCounts: new Map(),
    nanValueCounts: new Map(),
    lowerBounds: new Map(),
    upperBounds: new Map(),
  };
  for (const s of stats) {
    if (s.mode.kind === 'none') continue;
    out.valueCounts.set(s.fieldId, BigInt(s.valueCount));
    out.nullValueCounts.set(s.fieldId, BigInt(s.nullCount));
    if (s.type.kind === 'float' || s.type.kind === 'double') out.nanValueCounts.set(s.fieldId, BigInt(s.nanCount));
    if (!s.tracksBounds) continue;
    const lower = s.lowerBound();
    const upper = s.upperBound();
    if (lower !== undefined) out.lowerBounds.set(s.fieldId, lower);
    if (upper !== undefined) out.upperBounds.set(s.fieldId, upper);
  }
  return out;
}
