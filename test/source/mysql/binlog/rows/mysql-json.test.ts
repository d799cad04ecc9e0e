/**
 * MySQL binary JSON → MySQL's text. The harness runs MariaDB (JSON is text there), so these documents
 * are built here by hand following sql-common/json_binary.h, and the expected texts follow
 * Json_wrapper::to_string / my_gcvt (sql-common/json_dom.cc, strings/dtoa.cc). A MySQL server set via
 * FLOE_TEST_MYSQL_URL additionally exercises the real format in the round-trip test.
 */
import { describe, expect, it } from 'vitest';
import { mysqlJsonBinaryToText, formatJsonDouble, binaryDecimalToString } from '../../../../../src/source/mysql/binlog/rows/mysql-json.js';

type Encoded = { type: number; bytes: number[] };

const u16 = (n: number) => [n & 0xff, (n >> 8) & 0xff];
const u32 = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];
const varLen = (n: number) => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
};

function str(s: string): Encoded {
  const b = [...Buffer.from(s, 'utf8')];
  return { type: 0x0c, bytes: [...varLen(b.length), ...b] };
}
function int16(n: number): Encoded {
  return { type: 0x05, bytes: u16(n & 0xffff) };
}
function int64(n: bigint): Encoded {
  const b = Buffer.alloc(8);
  b.writeBigInt64LE(n);
  return { type: 0x09, bytes: [...b] };
}
function uint64(n: bigint): Encoded {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return { type: 0x0a, bytes: [...b] };
}
function double(d: number): Encoded {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(d);
  return { type: 0x0b, bytes: [...b] };
}
const lit = (code: number): Encoded => ({ type: 0x04, bytes: [code, 0] });
function opaque(fieldType: number, data: number[]): Encoded {
  return { type: 0x0f, bytes: [fieldType, ...varLen(data.length), ...data] };
}

/** A small or large object/array; keys must be given in MySQL's storage order. */
function container(entries: [string | null, Encoded][], large = false): Encoded {
  const isObject = entries.length > 0 && entries[0][0] !== null;
  const word = large ? 4 : 2;
  const w = large ? u32 : u16;
  const count = entries.length;
  const headerSize = 2 * word + (isObject ? count * (word + 2) : 0) + count * (1 + word);
  const keyBytes: number[] = [];
  const keyEntries: number[] = [];
  for (const [k] of entries) {
    if (k === null) continue;
    const b = [...Buffer.from(k, 'utf8')];
    keyEntries.push(...w(headerSize + keyBytes.length), ...u16(b.length));
    keyBytes.push(...b);
  }
  const valueBytes: number[] = [];
  const valueEntries: number[] = [];
  for (const [, v] of entries) {
    const inline = v.type === 0x04 || v.type === 0x05 || v.type === 0x06 || (large && (v.type === 0x07 || v.type === 0x08));
    if (inline) {
      const data = [...v.bytes];
      while (data.length < word) data.push(0);
      valueEntries.push(v.type, ...data.slice(0, word));
    } else {
      valueEntries.push(v.type, ...w(headerSize + keyBytes.length + valueBytes.length));
      valueBytes.push(...v.bytes);
    }
  }
  const body = [...keyEntries, ...valueEntries, ...keyBytes, ...valueBytes];
  const size = 2 * word + body.length;
  return { type: isObject ? (large ? 0x01 : 0x00) : large ? 0x03 : 0x02, bytes: [...w(count), ...w(size), ...body] };
}

const doc = (e: Encoded) => Uint8Array.from([e.type, ...e.bytes]);

describe('MySQL binary JSON to text', () => {
  it('prints objects in storage order with MySQL separators, integer-like keys included', () => {
    // storage order: by key length, then bytes — "b" before "10"; a JS object would put "10" first
    const d = container([['b', int16(1)], ['10', double(2)], ['abc', container([[null, int16(1)], [null, double(2.5)], [null, str('x')]])]]);
    expect(mysqlJsonBinaryToText(doc(d))).toBe('{"b": 1, "10": 2.0, "abc": [1, 2.5, "x"]}');
  });

  it('prints scalars, literals and 64-bit integers exactly', () => {
    expect(mysqlJsonBinaryToText(doc(lit(0)))).toBe('null');
    expect(mysqlJsonBinaryToText(doc(container([[null, lit(1)], [null, lit(2)], [null, lit(0)]])))).toBe('[true, false, null]');
    expect(mysqlJsonBinaryToText(doc(int16(-5)))).toBe('-5');
    expect(mysqlJsonBinaryToText(doc(int64(-9223372036854775808n)))).toBe('-9223372036854775808');
    expect(mysqlJsonBinaryToText(doc(uint64(18446744073709551615n)))).toBe('18446744073709551615');
    expect(mysqlJsonBinaryToText(doc(str('')))).toBe('""');
    expect(mysqlJsonBinaryToText(new Uint8Array(0))).toBe('null');
  });

  it('escapes strings as MySQL double_quote() does and keeps 4-byte characters', () => {
    expect(mysqlJsonBinaryToText(doc(str('a"b\\c\n\t\u0001\u001f/😀한')))).toBe('"a\\"b\\\\c\\n\\t\\u0001\\u001f/😀한"');
    const long = 'x'.repeat(300); // two-byte variable length
    expect(mysqlJsonBinaryToText(doc(str(long)))).toBe(`"${long}"`);
  });

  it('reads large objects and arrays (32-bit offsets, inlined int32)', () => {
    const d = container([['k', { type: 0x07, bytes: u32(-7 >>> 0) }], ['kk', container([[null, str('deep')]], true)]], true);
    expect(mysqlJsonBinaryToText(doc(d))).toBe('{"k": -7, "kk": ["deep"]}');
  });

  it('prints opaque decimals and temporals as MySQL does', () => {
    // DECIMAL(5,2) -12.50: precision, scale, then decimal2bin
    const dec = [...Buffer.from([0x7f, 0xf3, 0xcd])].map((b) => b);
    expect(binaryDecimalToString(Uint8Array.from([0x80 ^ 0x00, 0x0c, 0x32]), 5, 2)).toBe('12.50');
    expect(binaryDecimalToString(Uint8Array.from(dec), 5, 2)).toBe('-12.50');
    expect(mysqlJsonBinaryToText(doc(opaque(246, [5, 2, 0x80, 0x0c, 0x32])))).toBe('12.50');
    // DATETIME packed: ((2024*13+2) << 5 | 29) << 17 | 12 << 12 | 34 << 6 | 56, << 24 | 123456
    const ymd = BigInt((2024 * 13 + 2) * 32 + 29);
    const packed = (((ymd << 17n) | (12n << 12n) | (34n << 6n) | 56n) << 24n) | 123456n;
    const b = Buffer.alloc(8);
    b.writeBigInt64LE(packed);
    expect(mysqlJsonBinaryToText(doc(opaque(12, [...b])))).toBe('"2024-02-29 12:34:56.123456"');
    expect(mysqlJsonBinaryToText(doc(opaque(10, [...b])))).toBe('"2024-02-29"');
    const t = Buffer.alloc(8);
    t.writeBigInt64LE(-((((838n << 12n) | (59n << 6n) | 59n) << 24n) | 1n));
    expect(mysqlJsonBinaryToText(doc(opaque(11, [...t])))).toBe('"-838:59:59.000001"');
    expect(mysqlJsonBinaryToText(doc(opaque(252, [1, 2, 3])))).toBe('"base64:type252:AQID"');
    expect(mysqlJsonBinaryToText(doc(opaque(253, [...Buffer.from('hi')])))).toBe('"hi"');
  });

  it('formats doubles like my_gcvt(…, 34) plus ".0" for integral values', () => {
    expect(formatJsonDouble(1)).toBe('1.0');
    expect(formatJsonDouble(-2.5)).toBe('-2.5');
    expect(formatJsonDouble(0)).toBe('0.0');
    expect(formatJsonDouble(-0)).toBe('-0.0');
    expect(formatJsonDouble(0.1)).toBe('0.1');
    expect(formatJsonDouble(0.1 + 0.2)).toBe('0.30000000000000004');
    expect(formatJsonDouble(1 / 3)).toBe('0.3333333333333333');
    expect(formatJsonDouble(1e14)).toBe('100000000000000.0');
    expect(formatJsonDouble(1e15)).toBe('1e15');
    expect(formatJsonDouble(123456789012345680000)).toBe('1.2345678901234568e20');
    expect(formatJsonDouble(1.5e-7)).toBe('0.00000015');
    expect(formatJsonDouble(1e-15)).toBe('0.000000000000001');
    expect(formatJsonDouble(1e-16)).toBe('1e-16');
    expect(formatJsonDouble(1.7976931348623157e308)).toBe('1.7976931348623157e308');
    expect(formatJsonDouble(5e-324)).toBe('5e-324');
    expect(formatJsonDouble(-1.25e-100)).toBe('-1.25e-100');
  });
});
