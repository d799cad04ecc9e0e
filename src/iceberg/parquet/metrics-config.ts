/**
 * Which column metrics a writer stores in manifests, per field: Java's `MetricsModes` (`none`,
 * `counts`, `truncate(N)`, `full`) and `MetricsConfig.from(properties, schema)`:
 *
 * - `write.metadata.metrics.default` sets the mode of every column;
 * - without it, every column gets `truncate(16)` unless the table has more than
 *   `write.metadata.metrics.max-inferred-column-defaults` (100) top-level columns, in which case only
 *   the first 100 top-level columns (with everything nested in them) do, and the rest get `none`;
 * - `write.metadata.metrics.column.<name>` overrides one column (dotted names for nested fields).
 *
 * Not done here: Java also promotes sort-order columns to at least truncate(16).
 */
import { FloeError } from '../../util/errors.js';
import type { Schema } from '../spec/schema.js';
import type { IcebergType, NestedField } from '../spec/types.js';

export type MetricsMode =
  | { kind: 'none' }
  | { kind: 'counts' }
  | { kind: 'truncate'; length: number }
  | { kind: 'full' };

export interface MetricsConfig {
  defaultMode: MetricsMode;
  /** Per field id. */
  columnModes?: ReadonlyMap<number, MetricsMode>;
}

export const MetricsModes = {
  none: Object.freeze({ kind: 'none' }) as MetricsMode,
  counts: Object.freeze({ kind: 'counts' }) as MetricsMode,
  full: Object.freeze({ kind: 'full' }) as MetricsMode,
  truncate(length: number): MetricsMode {
    if (!Number.isInteger(length) || length <= 0) {
      throw new FloeError('iceberg.parquet', 'invalid-argument', `metrics mode truncate(${length}): expected a positive length`);
    }
    return { kind: 'truncate', length };
  },
};

/** Java's default: `write.metadata.metrics.default=truncate(16)`. */
const DEFAULT_METRICS_MODE: MetricsMode = MetricsModes.truncate(16);
export const DEFAULT_METRICS_CONFIG: MetricsConfig = Object.freeze({ defaultMode: DEFAULT_METRICS_MODE });

const METRICS_DEFAULT_PROPERTY = 'write.metadata.metrics.default';
const METRICS_COLUMN_PROPERTY_PREFIX = 'write.metadata.metrics.column.';
const METRICS_MAX_INFERRED_PROPERTY = 'write.metadata.metrics.max-inferred-column-defaults';
const MAX_INFERRED_DEFAULT = 100;

/** Parses `none`, `counts`, `full`, `truncate(N)` (case-insensitive, as `MetricsModes.fromString`). */
export function parseMetricsMode(text: string): MetricsMode {
  const s = text.trim().toLowerCase();
  if (s === 'none') return MetricsModes.none;
  if (s === 'counts') return MetricsModes.counts;
  if (s === 'full') return MetricsModes.full;
  const m = /^truncate\((\d+)\)$/.exec(s);
  if (m) return MetricsModes.truncate(Number(m[1]));
  throw new FloeError('iceberg.parquet', 'config', `metrics mode ${JSON.stringify(text)}: expected none, counts, full or truncate(N)`);
}

export function metricsModeFor(config: MetricsConfig, fieldId: number): MetricsMode {
  return config.columnModes?.get(fieldId) ?? config.defaultMode;
}

function nestedIds(type: IcebergType, out: number[]): void {
  if (type.kind === 'struct') {
    for (const f of type.fields) {
      out.push(f.id);
      nestedIds(f.type, out);
    }
  } else if (type.kind === 'list') {
    out.push(type.elementId);
    nestedIds(type.element, out);
  } else if (type.kind === 'map') {
    out.push(type.keyId, type.valueId);
    nestedIds(type.keyType, out);
    nestedIds(type.valueType, out);
  }
}

function idsUnder(fields: readonly NestedField[]): number[] {
  const out: number[] = [];
  nestedIds({ kind: 'struct', fields: [...fields] }, out);
  return out;
}

/** Java's `MetricsConfig.from(properties, schema)` without sort-order promotion (see header). */
export function metricsConfigFromProperties(properties: Readonly<Record<string, string>>, schema: Schema): MetricsConfig {
  const columnModes = new Map<number, MetricsMode>();
  let defaultMode: MetricsMode;
  const configured = properties[METRICS_DEFAULT_PROPERTY];
  const limitText = properties[METRICS_MAX_INFERRED_PROPERTY];
  const parsedLimit = limitText === undefined ? MAX_INFERRED_DEFAULT : Number(limitText);
  const limit = Number.isInteger(parsedLimit) && parsedLimit >= 0 ? parsedLimit : MAX_INFERRED_DEFAULT;
  if (configured !== undefined) {
    defaultMode = parseMetricsMode(configured);
  } else if (schema.fields.length <= limit) {
    defaultMode = DEFAULT_METRICS_MODE;
  } else {
    defaultMode = MetricsModes.none;
    for (const id of idsUnder(schema.fields.slice(0, limit))) columnModes.set(id, DEFAULT_METRICS_MODE);
  }
  for (const [key, value] of Object.entries(properties)) {
    if (!key.startsWith(METRICS_COLUMN_PROPERTY_PREFIX)) continue;
    const name = key.slice(METRICS_COLUMN_PROPERTY_PREFIX.length);
    const field = schema.findFieldByName(name);
    if (!field) {
      throw new FloeError('iceberg.parquet', 'config', `table property ${key} names no column of schema ${schema.schemaId}; fix or remove the property`);
    }
    columnModes.set(field.id, parseMetricsMode(value));
  }
  return { defaultMode, columnModes };
}
