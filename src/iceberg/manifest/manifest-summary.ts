/**
 * Partition field summaries of a manifest (spec "Manifest Lists" → `field_summary`), accumulated as
 * Java's `PartitionSummary` does: per partition field, whether any entry's value is null or NaN, and
 * the lower/upper bound of the other values in the binary single-value form of the partition field's
 * result type (spec note 1). Every entry counts, whatever its status.
 *
 * Readers prune a manifest whose summary says `contains_null=false` with null bounds, reading it as
 * "no non-null value" (ClickHouse#118930, docs/iceberg-writer-checklist.md §3.2). Java writes exactly that for an empty
 * manifest and for a field whose values are all NaN; floe instead omits the whole `partitions` list
 * in those cases (the field is optional), which only costs pruning, never rows.
 */
import type { Value } from '../../model/values.js';
import type { PartitionFieldSummary } from './manifest-file.js';
import { compareValues, toBinary } from '../spec/single-value.js';
import type { PrimitiveType } from '../spec/types.js';

interface FieldStats {
  type: PrimitiveType;
  containsNull: boolean;
  containsNan: boolean;
  min: Value;
  max: Value;
}

export class PartitionSummaryBuilder {
  private readonly fields: FieldStats[];
  private count = 0;

  constructor(types: readonly PrimitiveType[]) {
    this.fields = types.map((type) => ({ type, containsNull: false, containsNan: false, min: null, max: null }));
  }

  /** Adds one entry's partition tuple (values in spec field order). */
  update(partition: readonly Value[]): void {
    this.count++;
    for (let i = 0; i < this.fields.length; i++) {
      const f = this.fields[i]!;
      const v = partition[i] ?? null;
      if (v === null) {
        f.containsNull = true;
      } else if (typeof v === 'number' && Number.isNaN(v)) {
        f.containsNan = true;
      } else if (f.min === null) {
        f.min = v;
        f.max = v;
      } else {
        if (compareValues(f.type, v, f.min) < 0) f.min = v;
        if (compareValues(f.type, f.max, v) < 0) f.max = v;
      }
    }
  }

  /**
   * The summaries in spec order, or undefined when a summary would claim "no nulls" without bounds
   * (no entries, or only NaN values): see the module comment.
   */
  summaries(): PartitionFieldSummary[] | undefined {
    if (this.count === 0) return undefined;
    const out: PartitionFieldSummary[] = [];
    for (const f of this.fields) {
      if (!f.containsNull && f.min === null) return undefined;
      const s: PartitionFieldSummary = { containsNull: f.containsNull, containsNan: f.containsNan };
      if (f.min !== null) {
        s.lowerBound = toBinary(f.type, f.min);
        s.upperBound = toBinary(f.type, f.max);
      }
      out.push(s);
    }
    return out;
  }
}
