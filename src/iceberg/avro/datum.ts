/**
 * Schema-driven Avro datum encoding and decoding (Avro 1.11 spec, "Binary Encoding").
 *
 * A schema is compiled once into a tree of closures; encoding or decoding a record then walks no
 * schema objects. The JS value model:
 *
 * | Avro            | JS                                                                  |
 * |-----------------|---------------------------------------------------------------------|
 * | null            | null (undefined is accepted when writing)                           |
 * | boolean         | boolean                                                             |
 * | int             | number (signed 32-bit)                                              |
 * | long            | bigint (always)                                                     |
 * | float, double   | number                                                              |
 * | bytes, fixed    | Uint8Array                                                          |
 * | string, enum    | string                                                              |
 * | array           | Array                                                               |
 * | map             | Map<string, V> (a plain object is accepted when writing)            |
 * | record          | plain object keyed by field name                                    |
 * | union           | the branch's value; writing picks the first branch that accepts it  |
 *
 * Logical types are not interpreted here; the Iceberg layer converts values (see `iceberg-values.ts`).
 */
import { FloeError } from '../../util/errors.js';
import type { AvroReader, AvroWriter } from './binary.js';
import type { AvroSchema } from './schema.js';

const SUBSYSTEM = 'iceberg.avro';

export type DatumEncoder = (w: AvroWriter, value: unknown) => void;
export type DatumDecoder = (r: AvroReader) => unknown;

const MIN_INT = -(2 ** 31);
const MAX_INT = 2 ** 31 - 1;

function mismatch(path: string, expected: string, value: unknown): FloeError {
  return new FloeError(SUBSYSTEM, 'invalid-argument', `cannot write ${path || 'value'}: expected ${expected}, found ${describe(value)}`);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (typeof v === 'bigint') return `bigint ${v}`;
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 60 ? v.slice(0, 60) + '…' : v)}`;
  if (v instanceof Uint8Array) return `${v.length} bytes`;
  if (Array.isArray(v)) return `array of ${v.length}`;
  if (typeof v === 'object') return 'object';
  return `${typeof v} ${String(v)}`;
}

// ---- encoding ------------------------------------------------------------------------------------

export function compileEncoder(schema: AvroSchema): DatumEncoder {
  return buildEncoder(schema, '', new Map());
}

function buildEncoder(t: AvroSchema, path: string, cache: Map<AvroSchema, DatumEncoder>): DatumEncoder {
  const cached = cache.get(t);
  if (cached) return cached;
  switch (t.type) {
    case 'null':
      return (_w, v) => {
        if (v !== null && v !== undefined) throw mismatch(path, 'null', v);
      };
    case 'boolean':
      return (w, v) => {
        if (typeof v !== 'boolean') throw mismatch(path, 'a boolean', v);
        w.writeBoolean(v);
      };
    case 'int':
      return (w, v) => {
        if (typeof v !== 'number' || !Number.isInteger(v) || v < MIN_INT || v > MAX_INT) throw mismatch(path, 'a 32-bit integer number', v);
        w.writeInt(v);
      };
    case 'long':
      return (w, v) => {
        if (typeof v !== 'bigint') throw mismatch(path, 'a bigint (Avro long)', v);
        w.writeLong(v);
      };
    case 'float':
      return (w, v) => {
        if (typeof v !== 'number') throw mismatch(path, 'a number (float)', v);
        w.writeFloat(v);
      };
    case 'double':
      return (w, v) => {
        if (typeof v !== 'number') throw mismatch(path, 'a number (double)', v);
        w.writeDouble(v);
      };
    case 'bytes':
      return (w, v) => {
        if (!(v instanceof Uint8Array)) throw mismatch(path, 'a Uint8Array (bytes)', v);
        w.writeBytes(v);
      };
    case 'string':
      return (w, v) => {
        if (typeof v !== 'string') throw mismatch(path, 'a string', v);
        w.writeString(v);
      };
    case 'fixed': {
      const size = t.size;
      return (w, v) => {
        if (!(v instanceof Uint8Array) || v.length !== size) throw mismatch(path, `a Uint8Array of exactly ${size} bytes (fixed ${t.name})`, v);
        w.writeRaw(v);
      };
    }
    case 'enum': {
      const index = new Map(t.symbols.map((s, i) => [s, i]));
      return (w, v) => {
        const i = typeof v === 'string' ? index.get(v) : undefined;
        if (i === undefined) throw mismatch(path, `one of the symbols of enum ${t.name}`, v);
        w.writeInt(i);
      };
    }
    case 'array': {
      const item = buildEncoder(t.items, `${path}[]`, cache);
      return (w, v) => {
        if (!Array.isArray(v)) throw mismatch(path, 'an array', v);
        if (v.length > 0) {
          w.writeLong(BigInt(v.length));
          for (let i = 0; i < v.length; i++) item(w, v[i]);
        }
        w.writeLong(0n);
      };
    }
    case 'map': {
      const value = buildEncoder(t.values, `${path}{}`, cache);
      return (w, v) => {
        let entries: [string, unknown][];
        if (v instanceof Map) entries = [...v.entries()];
        else if (v !== null && typeof v === 'object' && !Array.isArray(v)) entries = Object.entries(v);
        else throw mismatch(path, 'a Map or an object (Avro map)', v);
        if (entries.length > 0) {
          w.writeLong(BigInt(entries.length));
          for (const [k, x] of entries) {
            if (typeof k !== 'string') throw mismatch(`${path} key`, 'a string', k);
            w.writeString(k);
            value(w, x);
          }
        }
        w.writeLong(0n);
      };
    }
    case 'union': {
      const branches = t.branches.map((b, i) => ({ index: i, accepts: acceptor(b), encode: buildEncoder(b, path, cache) }));
      const nullIndex = t.branches.findIndex((b) => b.type === 'null');
      return (w, v) => {
        if (v === null || v === undefined) {
          if (nullIndex < 0) throw mismatch(path, 'a non-null value (the union has no null branch)', v);
          w.writeInt(nullIndex);
          return;
        }
        for (const b of branches) {
          if (b.index !== nullIndex && b.accepts(v)) {
            w.writeInt(b.index);
            b.encode(w, v);
            return;
          }
        }
        throw mismatch(path, `a value for one of the union branches [${t.branches.map((b) => b.type).join(', ')}]`, v);
      };
    }
    case 'record': {
      // Placeholder first so that recursive records compile.
      let impl: DatumEncoder = () => {
        throw new FloeError(SUBSYSTEM, 'internal', `record ${t.name} encoder used before it was compiled`);
      };
      const self: DatumEncoder = (w, v) => impl(w, v);
      cache.set(t, self);
      const fields = t.fields.map((f) => ({ name: f.name, encode: buildEncoder(f.type, path ? `${path}.${f.name}` : f.name, cache) }));
      const n = fields.length;
      impl = (w, v) => {
        if (v === null || typeof v !== 'object') throw mismatch(path || t.name, `a record ${t.name} object`, v);
        const o = v as Record<string, unknown>;
        for (let i = 0; i < n; i++) {
          const f = fields[i]!;
          f.encode(w, o[f.name]);
        }
      };
      return self;
    }
  }
}

/** Whether a JS value can be written with a schema (used to choose a union branch). */
function acceptor(t: AvroSchema): (v: unknown) => boolean {
  switch (t.type) {
    case 'null':
      return (v) => v === null || v === undefined;
    case 'boolean':
      return (v) => typeof v === 'boolean';
    case 'int':
      return (v) => typeof v === 'number' && Number.isInteger(v) && v >= MIN_INT && v <= MAX_INT;
    case 'long':
      return (v) => typeof v === 'bigint';
    case 'float':
    case 'double':
      return (v) => typeof v === 'number';
    case 'bytes':
      return (v) => v instanceof Uint8Array;
    case 'fixed':
      return (v) => v instanceof Uint8Array && v.length === t.size;
    case 'string':
      return (v) => typeof v === 'string';
    case 'enum':
      return (v) => typeof v === 'string' && t.symbols.includes(v);
    case 'array':
      return (v) => Array.isArray(v);
    case 'map':
      return (v) => v instanceof Map || (v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array));
    case 'record':
      return (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array) && !(v instanceof Map);
    case 'union':
      return () => false;
  }
}

// ---- decoding ------------------------------------------------------------------------------------

export function compileDecoder(schema: AvroSchema): DatumDecoder {
  return buildDecoder(schema, new Map());
}

function buildDecoder(t: AvroSchema, cache: Map<AvroSchema, DatumDecoder>): DatumDecoder {
  const cached = cache.get(t);
  if (cached) return cached;
  switch (t.type) {
    case 'null':
      return () => null;
    case 'boolean':
      return (r) => r.readBoolean();
    case 'int':
      return (r) => r.readInt();
    case 'long':
      return (r) => r.readLong();
    case 'float':
      return (r) => r.readFloat();
    case 'double':
      return (r) => r.readDouble();
    case 'bytes':
      return (r) => r.readBytes();
    case 'string':
      return (r) => r.readString();
    case 'fixed': {
      const size = t.size;
      return (r) => r.readFixed(size);
    }
    case 'enum': {
      const symbols = t.symbols;
      return (r) => {
        const i = r.readInt();
        if (i < 0 || i >= symbols.length) throw new FloeError(SUBSYSTEM, 'invalid-data', `enum ${t.name} index ${i} out of range 0..${symbols.length - 1}`);
        return symbols[i];
      };
    }
    case 'array': {
      const item = buildDecoder(t.items, cache);
      return (r) => {
        const out: unknown[] = [];
        for (;;) {
          let count = r.readCount('array block count');
          if (count === 0) return out;
          if (count < 0) {
            count = -count;
            r.readLong(); // block size in bytes, only useful for skipping
          }
          for (let i = 0; i < count; i++) out.push(item(r));
        }
      };
    }
    case 'map': {
      const value = buildDecoder(t.values, cache);
      return (r) => {
        const out = new Map<string, unknown>();
        for (;;) {
          let count = r.readCount('map block count');
          if (count === 0) return out;
          if (count < 0) {
            count = -count;
            r.readLong();
          }
          for (let i = 0; i < count; i++) {
            const k = r.readString();
            out.set(k, value(r));
          }
        }
      };
    }
    case 'union': {
      const branches = t.branches.map((b) => buildDecoder(b, cache));
      return (r) => {
        const i = r.readInt();
        const b = branches[i];
        if (!b) throw new FloeError(SUBSYSTEM, 'invalid-data', `union branch index ${i} out of range 0..${branches.length - 1} at offset ${r.pos}`);
        return b(r);
      };
    }
    case 'record': {
      let impl: DatumDecoder = () => {
        throw new FloeError(SUBSYSTEM, 'internal', `record ${t.name} decoder used before it was compiled`);
      };
      const self: DatumDecoder = (r) => impl(r);
      cache.set(t, self);
      const names = t.fields.map((f) => f.name);
      const decoders = t.fields.map((f) => buildDecoder(f.type, cache));
      const n = names.length;
      const hasProto = names.includes('__proto__');
      impl = (r) => {
        const o: Record<string, unknown> = {};
        for (let i = 0; i < n; i++) {
          const v = decoders[i]!(r);
          if (hasProto && names[i] === '__proto__') Object.defineProperty(o, '__proto__', { value: v, enumerable: true, writable: true, configurable: true });
          else o[names[i]!] = v;
        }
        return o;
      };
      return self;
    }
  }
}
