/**
 * The Avro schema model (Avro 1.11 spec, "Schema Declaration"), parsed from and written to JSON.
 *
 * Extra JSON attributes are kept in `attrs`, in order: Iceberg stores its field ids there
 * (`field-id`, `element-id`, `key-id`, `value-id`; spec Appendix A "Field IDs") along with
 * `logicalType`, `adjust-to-utc`, `precision`/`scale`. Named types (record, enum, fixed) may be
 * referenced by name after their definition; `schemaToJson` writes a named type in full the first
 * time and by name afterwards, as Avro requires (and as Java's `Schema.toString` does).
 */
import { FloeError } from '../../util/errors.js';
import { parseJson, stringifyJson } from '../../util/json.js';

const SUBSYSTEM = 'iceberg.avro';

export type AvroPrimitiveName = 'null' | 'boolean' | 'int' | 'long' | 'float' | 'double' | 'bytes' | 'string';
export type Attrs = Record<string, unknown>;

export interface AvroPrimitive {
  type: AvroPrimitiveName;
  attrs?: Attrs;
}

export interface AvroField {
  name: string;
  type: AvroSchema;
  doc?: string;
  /** Present (even when `null`) only if the field declares a default. */
  default?: unknown;
  hasDefault?: boolean;
  attrs?: Attrs;
}

export interface AvroRecord {
  type: 'record';
  name: string;
  namespace?: string;
  doc?: string;
  fields: AvroField[];
  attrs?: Attrs;
}

interface AvroEnum {
  type: 'enum';
  name: string;
  namespace?: string;
  symbols: string[];
  attrs?: Attrs;
}

interface AvroFixed {
  type: 'fixed';
  name: string;
  namespace?: string;
  size: number;
  attrs?: Attrs;
}

interface AvroArray {
  type: 'array';
  items: AvroSchema;
  attrs?: Attrs;
}

interface AvroMap {
  type: 'map';
  values: AvroSchema;
  attrs?: Attrs;
}

export interface AvroUnion {
  type: 'union';
  branches: AvroSchema[];
}

type AvroNamed = AvroRecord | AvroEnum | AvroFixed;
export type AvroSchema = AvroPrimitive | AvroRecord | AvroEnum | AvroFixed | AvroArray | AvroMap | AvroUnion;

const PRIMITIVES = new Set<string>(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string']);
const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

// ---- constructors used by schema builders --------------------------------------------------------

export function primitive(type: AvroPrimitiveName, attrs?: Attrs): AvroPrimitive {
  return attrs ? { type, attrs } : { type };
}

/** `["null", T]`, the only union Iceberg allows (spec Appendix A). */
export function optional(t: AvroSchema): AvroUnion {
  if (t.type === 'union') return t;
  return { type: 'union', branches: [{ type: 'null' }, t] };
}

/** The non-null branch of an optional union, or the schema itself. */
export function unwrapOptional(t: AvroSchema): AvroSchema {
  if (t.type === 'union' && t.branches.length === 2) {
    const [a, b] = t.branches as [AvroSchema, AvroSchema];
    if (a.type === 'null') return b;
    if (b.type === 'null') return a;
  }
  return t;
}

function fullName(t: AvroNamed): string {
  return t.namespace ? `${t.namespace}.${t.name}` : t.name;
}

/** The Iceberg field id stored on a record field, or undefined. */
export function fieldId(f: AvroField): number | undefined {
  const v = f.attrs?.['field-id'];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return Number(v);
  throw new FloeError(SUBSYSTEM, 'invalid-data', `field ${f.name} has a non-integer field-id ${String(v)}`);
}

// ---- parsing -------------------------------------------------------------------------------------

/** Parses an Avro schema from its JSON text (as stored under `avro.schema` in a container file). */
export function parseSchema(json: string | unknown): AvroSchema {
  const value = typeof json === 'string' ? parseJson(json) : json;
  return new SchemaParser().parse(value, undefined);
}

class SchemaParser {
  private readonly named = new Map<string, AvroNamed>();

  parse(v: unknown, ns: string | undefined): AvroSchema {
    if (typeof v === 'string') return this.reference(v, ns);
    if (Array.isArray(v)) {
      const branches = v.map((b) => this.parse(b, ns));
      for (const b of branches) {
        if (b.type === 'union') throw this.fail('a union directly inside a union', v);
      }
      return { type: 'union', branches };
    }
    if (v === null || typeof v !== 'object') throw this.fail('a schema (string, array or object)', v);
    const o = v as Record<string, unknown>;
    const type = o.type;
    if (typeof type !== 'string') {
      // {"type": {...}} wraps a schema; Avro allows it.
      if (type !== undefined && typeof type === 'object') return this.parse(type, ns);
      throw this.fail('an object with a "type"', v);
    }
    const attrs = extraAttrs(o, TYPE_KEYS[type] ?? BASE_KEYS);
    switch (type) {
      case 'record':
      case 'error': {
        const { name, namespace } = this.names(o, ns);
        const rec: AvroRecord = { type: 'record', name, fields: [] };
        if (namespace) rec.namespace = namespace;
        if (typeof o.doc === 'string') rec.doc = o.doc;
        if (attrs) rec.attrs = attrs;
        this.define(rec);
        if (!Array.isArray(o.fields)) throw this.fail(`record ${name} with a "fields" array`, v);
        const seen = new Set<string>();
        for (const fv of o.fields) {
          if (fv === null || typeof fv !== 'object') throw this.fail(`a field object in record ${name}`, fv);
          const fo = fv as Record<string, unknown>;
          if (typeof fo.name !== 'string' || !NAME_RE.test(fo.name)) throw this.fail(`a valid field name in record ${name}`, fo.name);
          if (seen.has(fo.name)) throw this.fail(`unique field names in record ${name}`, fo.name);
          seen.add(fo.name);
          const field: AvroField = { name: fo.name, type: this.parse(fo.type, namespace) };
          if (typeof fo.doc === 'string') field.doc = fo.doc;
          if ('default' in fo) {
            field.hasDefault = true;
            field.default = fo.default;
          }
          const fattrs = extraAttrs(fo, FIELD_KEYS);
          if (fattrs) field.attrs = fattrs;
          rec.fields.push(field);
        }
        return rec;
      }
      case 'enum': {
        const { name, namespace } = this.names(o, ns);
        if (!Array.isArray(o.symbols) || !o.symbols.every((s) => typeof s === 'string')) throw this.fail(`enum ${name} with string symbols`, v);
        const en: AvroEnum = { type: 'enum', name, symbols: o.symbols as string[] };
        if (namespace) en.namespace = namespace;
        if (attrs) en.attrs = attrs;
        this.define(en);
        return en;
      }
      case 'fixed': {
        const { name, namespace } = this.names(o, ns);
        const size = typeof o.size === 'bigint' ? Number(o.size) : o.size;
        if (typeof size !== 'number' || !Number.isInteger(size) || size < 0) throw this.fail(`fixed ${name} with a non-negative integer size`, o.size);
        const fx: AvroFixed = { type: 'fixed', name, size };
        if (namespace) fx.namespace = namespace;
        if (attrs) fx.attrs = attrs;
        this.define(fx);
        return fx;
      }
      case 'array': {
        const arr: AvroArray = { type: 'array', items: this.parse(o.items, ns) };
        if (attrs) arr.attrs = attrs;
        return arr;
      }
      case 'map': {
        const map: AvroMap = { type: 'map', values: this.parse(o.values, ns) };
        if (attrs) map.attrs = attrs;
        return map;
      }
      default:
        if (PRIMITIVES.has(type)) return attrs ? { type: type as AvroPrimitiveName, attrs } : { type: type as AvroPrimitiveName };
        return this.reference(type, ns);
    }
  }

  private reference(name: string, ns: string | undefined): AvroSchema {
    if (PRIMITIVES.has(name)) return { type: name as AvroPrimitiveName };
    const full = name.includes('.') || !ns ? name : `${ns}.${name}`;
    const found = this.named.get(full) ?? this.named.get(name);
    if (!found) throw new FloeError(SUBSYSTEM, 'invalid-data', `Avro schema references the type ${JSON.stringify(name)} before defining it; expected a primitive or a previously defined record, enum or fixed`);
    return found;
  }

  private names(o: Record<string, unknown>, ns: string | undefined): { name: string; namespace: string | undefined } {
    if (typeof o.name !== 'string') throw this.fail('a "name" on a named type', o);
    let name = o.name;
    let namespace = typeof o.namespace === 'string' && o.namespace !== '' ? o.namespace : o.namespace === '' ? undefined : ns;
    const dot = name.lastIndexOf('.');
    if (dot >= 0) {
      namespace = name.slice(0, dot);
      name = name.slice(dot + 1);
    }
    if (!NAME_RE.test(name)) throw this.fail('a valid Avro name', o.name);
    return { name, namespace };
  }

  private define(t: AvroNamed): void {
    const full = fullName(t);
    if (this.named.has(full)) throw new FloeError(SUBSYSTEM, 'invalid-data', `Avro schema defines the name ${full} twice; names of records, enums and fixed types must be unique`);
    this.named.set(full, t);
  }

  private fail(expected: string, found: unknown): FloeError {
    let text: string;
    try {
      text = stringifyJson(found).slice(0, 120);
    } catch {
      text = String(found);
    }
    return new FloeError(SUBSYSTEM, 'invalid-data', `invalid Avro schema: expected ${expected}, found ${text}`);
  }
}

const BASE_KEYS = new Set(['type']);
const TYPE_KEYS: Record<string, Set<string>> = {
  record: new Set(['type', 'name', 'namespace', 'doc', 'fields', 'aliases']),
  error: new Set(['type', 'name', 'namespace', 'doc', 'fields', 'aliases']),
  enum: new Set(['type', 'name', 'namespace', 'doc', 'symbols', 'aliases', 'default']),
  fixed: new Set(['type', 'name', 'namespace', 'doc', 'size', 'aliases']),
  array: new Set(['type', 'items']),
  map: new Set(['type', 'values']),
};
const FIELD_KEYS = new Set(['name', 'type', 'doc', 'default', 'order', 'aliases']);

function extraAttrs(o: Record<string, unknown>, known: Set<string>): Attrs | undefined {
  let out: Attrs | undefined;
  for (const [k, v] of Object.entries(o)) {
    if (known.has(k)) continue;
    out ??= {};
    out[k] = v;
  }
  return out;
}

// ---- writing -------------------------------------------------------------------------------------

/**
 * The schema as a JSON value in Java's key order (type, name, size/items/fields, then attributes;
 * fields: name, type, doc, default, then attributes such as field-id). Named types after their first
 * appearance are written as their name.
 */
function schemaToJsonValue(schema: AvroSchema): unknown {
  return toJsonValue(schema, new Set<string>());
}

export function schemaToJson(schema: AvroSchema): string {
  return stringifyJson(schemaToJsonValue(schema));
}

function toJsonValue(t: AvroSchema, defined: Set<string>): unknown {
  switch (t.type) {
    case 'union':
      return t.branches.map((b) => toJsonValue(b, defined));
    case 'record': {
      const full = fullName(t);
      if (defined.has(full)) return full;
      defined.add(full);
      const out: Record<string, unknown> = { type: 'record', name: t.name };
      if (t.namespace) out.namespace = t.namespace;
      if (t.doc !== undefined) out.doc = t.doc;
      out.fields = t.fields.map((f) => {
        const fo: Record<string, unknown> = { name: f.name, type: toJsonValue(f.type, defined) };
        if (f.doc !== undefined) fo.doc = f.doc;
        if (f.hasDefault) fo.default = f.default ?? null;
        return Object.assign(fo, f.attrs);
      });
      return Object.assign(out, t.attrs);
    }
    case 'enum': {
      const full = fullName(t);
      if (defined.has(full)) return full;
      defined.add(full);
      const out: Record<string, unknown> = { type: 'enum', name: t.name };
      if (t.namespace) out.namespace = t.namespace;
      out.symbols = t.symbols;
      return Object.assign(out, t.attrs);
    }
    case 'fixed': {
      const full = fullName(t);
      if (defined.has(full)) return full;
      defined.add(full);
      const out: Record<string, unknown> = { type: 'fixed', name: t.name };
      if (t.namespace) out.namespace = t.namespace;
      out.size = t.size;
      return Object.assign(out, t.attrs);
    }
    case 'array':
      return Object.assign({ type: 'array', items: toJsonValue(t.items, defined) }, t.attrs);
    case 'map':
      return Object.assign({ type: 'map', values: toJsonValue(t.values, defined) }, t.attrs);
    default:
      return t.attrs ? Object.assign({ type: t.type }, t.attrs) : t.type;
  }
}
