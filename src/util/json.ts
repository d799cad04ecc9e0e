/**
 * Lossless JSON for Iceberg metadata: every integer outside JavaScript's safe range is parsed as a
 * BigInt, and BigInts are written as exact JSON integers. Iceberg longs (snapshot ids, sequence
 * numbers, row ids, timestamps) must survive a read/write round trip bit for bit (docs/iceberg-writer-checklist.md §1: "Use
 * BigInt end to end"; icebird fixed exactly this bug in 0.8.12 / 0.8.19).
 *
 * - `parseJson(text)`: integers with |n| <= 2^53-1 become `number`, larger ones `bigint`; numbers with a
 *   fraction or exponent become `number`. Use `asLong()` on fields that are Iceberg longs.
 * - `parseJson(text, { bigints: 'all' })`: every integer literal becomes a `bigint`.
 * - `stringifyJson(value, indent?)`: like JSON.stringify, but `bigint` is written as an integer and a
 *   `RawJson` is written verbatim (used for float single values such as `1.0`, which must keep their
 *   fraction, docs/iceberg-writer-checklist.md §2).
 */
import { FloeError } from './errors.js';

export class RawJson {
  constructor(readonly text: string) {}
}

export type JsonValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | RawJson
  | JsonValue[]
  | { [key: string]: JsonValue | undefined };

export interface ParseOptions {
  bigints?: 'unsafe' | 'all';
}

export function parseJson(text: string, options: ParseOptions = {}): any {
  const parser = new Parser(text, options.bigints ?? 'unsafe');
  parser.skipWs();
  const value = parser.value();
  parser.skipWs();
  if (parser.pos !== text.length) parser.fail('end of input');
  return value;
}

class Parser {
  pos = 0;
  constructor(
    readonly text: string,
    readonly bigints: 'unsafe' | 'all',
  ) {}

  fail(expected: string): never {
    const found = this.pos < this.text.length ? JSON.stringify(this.text[this.pos]) : 'end of input';
    throw new FloeError('util.json', 'invalid-data', `expected ${expected} at offset ${this.pos}, found ${found}`);
  }

  skipWs(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.pos++;
      else break;
    }
  }

  value(): any {
    const c = this.text[this.pos];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return this.string();
    if (c === 't') return this.literal('true', true);
    if (c === 'f') return this.literal('false', false);
    if (c === 'n') return this.literal('null', null);
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
    this.fail('a JSON value');
  }

  literal<T>(word: string, value: T): T {
    if (this.text.startsWith(word, this.pos)) {
      this.pos += word.length;
      return value;
    }
    this.fail(word);
  }

  object(): Record<string, any> {
    this.pos++;
    const out: Record<string, any> = {};
    this.skipWs();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipWs();
      if (this.text[this.pos] !== '"') this.fail('a string key');
      const key = this.string();
      this.skipWs();
      if (this.text[this.pos] !== ':') this.fail("':'");
      this.pos++;
      this.skipWs();
      // defineProperty keeps a "__proto__" key as data instead of changing the prototype
      Object.defineProperty(out, key, { value: this.value(), enumerable: true, writable: true, configurable: true });
      this.skipWs();
      const c = this.text[this.pos];
      if (c === ',') {
        this.pos++;
        continue;
      }
      if (c === '}') {
        this.pos++;
        return out;
      }
      this.fail("',' or '}'");
    }
  }

  array(): any[] {
    this.pos++;
    const out: any[] = [];
    this.skipWs();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipWs();
      out.push(this.value());
      this.skipWs();
      const c = this.text[this.pos];
      if (c === ',') {
        this.pos++;
        continue;
      }
      if (c === ']') {
        this.pos++;
        return out;
      }
      this.fail("',' or ']'");
    }
  }

  string(): string {
    const t = this.text;
    const start = ++this.pos;
    // fast path: no escapes
    let i = start;
    while (i < t.length) {
      const c = t.charCodeAt(i);
      if (c === 0x22) {
        this.pos = i + 1;
        return t.slice(start, i);
      }
      if (c === 0x5c || c < 0x20) break;
      i++;
    }
    let out = t.slice(start, i);
    this.pos = i;
    while (this.pos < t.length) {
      const c = t[this.pos]!;
      if (c === '"') {
        this.pos++;
        return out;
      }
      if (c === '\\') {
        const e = t[this.pos + 1];
        this.pos += 2;
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            const hex = t.slice(this.pos, this.pos + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('4 hex digits');
            out += String.fromCharCode(parseInt(hex, 16));
            this.pos += 4;
            break;
          }
          default:
            this.pos -= 1;
            this.fail('an escape character');
        }
        continue;
      }
      if (c.charCodeAt(0) < 0x20) this.fail('no control character in a string');
      out += c;
      this.pos++;
    }
    this.fail('closing quote');
  }

  number(): number | bigint {
    const t = this.text;
    const m = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
    m.lastIndex = this.pos;
    const match = m.exec(t);
    if (!match) this.fail('a number');
    const lit = match[0];
    this.pos += lit.length;
    if (match[1] === undefined && match[2] === undefined) {
      if (this.bigints === 'all') return BigInt(lit);
      const n = Number(lit);
      return Number.isSafeInteger(n) ? n : BigInt(lit);
    }
    return Number(lit);
  }
}

export function stringifyJson(value: unknown, indent?: number, pad = ''): string {
  const out: string[] = [];
  write(value, out, indent ?? 0, pad);
  return out.join('');
}

function write(value: unknown, out: string[], indent: number, pad: string): void {
  if (value === null || value === undefined) {
    out.push('null');
    return;
  }
  switch (typeof value) {
    case 'bigint':
      out.push(value.toString());
      return;
    case 'number':
      if (!Number.isFinite(value)) {
        throw new FloeError('util.json', 'invalid-argument', `cannot write ${value} as JSON: expected a finite number`);
      }
      out.push(JSON.stringify(value));
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'string':
      out.push(JSON.stringify(value));
      return;
    case 'object':
      break;
    default:
      throw new FloeError('util.json', 'invalid-argument', `cannot write a ${typeof value} as JSON`);
  }
  if (value instanceof RawJson) {
    out.push(value.text);
    return;
  }
  const inner = indent > 0 ? pad + ' '.repeat(indent) : '';
  const nl = indent > 0 ? '\n' : '';
  const colon = indent > 0 ? ': ' : ':';
  if (Array.isArray(value)) {
    if (value.length === 0) {
      out.push('[]');
      return;
    }
    out.push('[', nl);
    value.forEach((v, i) => {
      if (i > 0) out.push(',', nl);
      out.push(inner);
      write(v, out, indent, inner);
    });
    out.push(nl, pad, ']');
    return;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (entries.length === 0) {
    out.push('{}');
    return;
  }
  out.push('{', nl);
  entries.forEach(([k, v], i) => {
    if (i > 0) out.push(',', nl);
    out.push(inner, JSON.stringify(k), colon);
    write(v, out, indent, inner);
  });
  out.push(nl, pad, '}');
}

/** An Iceberg long read from lossless JSON (number or bigint) as a BigInt. */
export function asLong(value: unknown, what: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^-?[0-9]+$/.test(value)) return BigInt(value);
  throw new FloeError('util.json', 'invalid-data', `${what}: expected an integer (long), found ${describe(value)}`);
}

/** An Iceberg int read from lossless JSON. */
export function asInt(value: unknown, what: string): number {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'bigint' && value >= -(2n ** 31n) && value < 2n ** 31n) return Number(value);
  throw new FloeError('util.json', 'invalid-data', `${what}: expected an integer (int), found ${describe(value)}`);
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'bigint') return value.toString();
  try {
    return JSON.stringify(value)?.slice(0, 80) ?? String(value);
  } catch {
    return String(value);
  }
}
