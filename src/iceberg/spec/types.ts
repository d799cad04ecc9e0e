/**
 * Iceberg's type system (format/spec.md "Schemas and Data Types"), as plain immutable objects.
 *
 * Primitive types are written with their spec strings (`decimal(P,S)`, `fixed[L]`, `timestamptz`, …);
 * nested types carry the field ids of their children. JSON forms (Appendix C) live in `schema-json.ts`.
 */
import { FloeError } from '../../util/errors.js';

export type PrimitiveType =
  | { kind: 'boolean' }
  | { kind: 'int' }
  | { kind: 'long' }
  | { kind: 'float' }
  | { kind: 'double' }
  | { kind: 'decimal'; precision: number; scale: number }
  | { kind: 'date' }
  | { kind: 'time' }
  | { kind: 'timestamp' }
  | { kind: 'timestamptz' }
  | { kind: 'timestamp_ns' }
  | { kind: 'timestamptz_ns' }
  | { kind: 'string' }
  | { kind: 'uuid' }
  | { kind: 'fixed'; length: number }
  | { kind: 'binary' }
  | { kind: 'unknown' };

export interface NestedField {
  id: number;
  name: string;
  required: boolean;
  type: IcebergType;
  doc?: string;
  /** v3: value for rows written before the field existed (JS value form, see src/model/values.ts). */
  initialDefault?: unknown;
  /** v3: value a writer uses when it has no value for the field. */
  writeDefault?: unknown;
}

export interface StructType {
  kind: 'struct';
  fields: NestedField[];
}

export interface ListType {
  kind: 'list';
  elementId: number;
  elementRequired: boolean;
  element: IcebergType;
}

export interface MapType {
  kind: 'map';
  keyId: number;
  keyType: IcebergType;
  valueId: number;
  valueRequired: boolean;
  valueType: IcebergType;
}

export type IcebergType = PrimitiveType | StructType | ListType | MapType;

export function isPrimitive(t: IcebergType): t is PrimitiveType {
  return t.kind !== 'struct' && t.kind !== 'list' && t.kind !== 'map';
}

const SIMPLE_KINDS = [
  'boolean',
  'int',
  'long',
  'float',
  'double',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'timestamp_ns',
  'timestamptz_ns',
  'string',
  'uuid',
  'binary',
  'unknown',
] as const;
const SIMPLE = Object.fromEntries(SIMPLE_KINDS.map((k) => [k, Object.freeze({ kind: k }) as PrimitiveType])) as Record<
  (typeof SIMPLE_KINDS)[number],
  PrimitiveType
>;

export const Types = {
  boolean: SIMPLE.boolean,
  int: SIMPLE.int,
  long: SIMPLE.long,
  float: SIMPLE.float,
  double: SIMPLE.double,
  date: SIMPLE.date,
  time: SIMPLE.time,
  timestamp: SIMPLE.timestamp,
  timestamptz: SIMPLE.timestamptz,
  timestampNs: SIMPLE.timestamp_ns,
  timestamptzNs: SIMPLE.timestamptz_ns,
  string: SIMPLE.string,
  uuid: SIMPLE.uuid,
  binary: SIMPLE.binary,
  unknown: SIMPLE.unknown,
  decimal(precision: number, scale: number): PrimitiveType {
    if (!Number.isInteger(precision) || precision < 1 || precision > 38 || !Number.isInteger(scale) || scale > precision) {
      throw new FloeError('iceberg.types', 'invalid-argument', `decimal(${precision},${scale}): expected 1 <= precision <= 38 and scale <= precision`);
    }
    return { kind: 'decimal', precision, scale };
  },
  fixed(length: number): PrimitiveType {
    if (!Number.isInteger(length) || length < 1) {
      throw new FloeError('iceberg.types', 'invalid-argument', `fixed[${length}]: expected a positive length`);
    }
    return { kind: 'fixed', length };
  },
} as const;

/** The spec string of a primitive type: `decimal(10,2)`, `fixed[16]`, `timestamptz`. */
export function primitiveToString(t: PrimitiveType): string {
  switch (t.kind) {
    case 'decimal':
      return `decimal(${t.precision}, ${t.scale})`;
    case 'fixed':
      return `fixed[${t.length}]`;
    default:
      return t.kind;
  }
}

/** Parses a primitive type string as written in metadata JSON (whitespace-tolerant, as Java). */
export function parsePrimitive(text: string): PrimitiveType {
  const s = text.trim().toLowerCase();
  const simple = (SIMPLE as Record<string, PrimitiveType | undefined>)[s];
  if (simple) return simple;
  let m = /^decimal\s*\(\s*(\d+)\s*,\s*(-?\d+)\s*\)$/.exec(s);
  if (m) return { kind: 'decimal', precision: Number(m[1]), scale: Number(m[2]) };
  m = /^fixed\s*\[\s*(\d+)\s*\]$/.exec(s);
  if (m) return { kind: 'fixed', length: Number(m[1]) };
  throw new FloeError('iceberg.types', 'unsupported', `unknown primitive type ${JSON.stringify(text)}; expected one of the spec's primitive types`);
}

export function typeToString(t: IcebergType): string {
  if (isPrimitive(t)) return primitiveToString(t);
  if (t.kind === 'list') return `list<${typeToString(t.element)}>`;
  if (t.kind === 'map') return `map<${typeToString(t.keyType)}, ${typeToString(t.valueType)}>`;
  return `struct<${t.fields.map((f) => `${f.name}: ${typeToString(f.type)}`).join(', ')}>`;
}

export function typesEqual(a: IcebergType, b: IcebergType): boolean {
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case 'decimal':
      return a.precision === (b as typeof a).precision && a.scale === (b as typeof a).scale;
    case 'fixed':
      return a.length === (b as typeof a).length;
    case 'list': {
      const o = b as ListType;
      return a.elementId === o.elementId && a.elementRequired === o.elementRequired && typesEqual(a.element, o.element);
    }
    case 'map': {
      const o = b as MapType;
      return (
        a.keyId === o.keyId &&
        a.valueId === o.valueId &&
        a.valueRequired === o.valueRequired &&
        typesEqual(a.keyType, o.keyType) &&
        typesEqual(a.valueType, o.valueType)
      );
    }
    case 'struct': {
      const o = b as StructType;
      return (
        a.fields.length === o.fields.length &&
        a.fields.every((f, i) => {
          const g = o.fields[i]!;
          return f.id === g.id && f.name === g.name && f.required === g.required && typesEqual(f.type, g.type);
        })
      );
    }
    default:
      return true;
  }
}

/** Types introduced by format v3 (spec "Version 3"); Java rejects them in older tables. */
export function minFormatVersion(t: PrimitiveType): number {
  return t.kind === 'timestamp_ns' || t.kind === 'timestamptz_ns' || t.kind === 'unknown' ? 3 : 1;
}
