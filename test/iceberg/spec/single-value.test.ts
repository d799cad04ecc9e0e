import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  compareValues,
  fromBinary,
  fromJsonSingleValue,
  toBinary,
  toJsonSingleValue,
  unscaledFromBytes,
  unscaledToBytes,
  uuidToBytes,
} from '../../../src/iceberg/spec/single-value.js';
import { parsePrimitive, Types, type PrimitiveType } from '../../../src/iceberg/spec/types.js';
import { fromHex, toHex, type Value } from '../../../src/model/values.js';
import { parseJson, stringifyJson } from '../../../src/util/json.js';

const json = (t: PrimitiveType, v: Value): string => stringifyJson(toJsonSingleValue(t, v));
const readJson = (t: PrimitiveType, text: string): Value => fromJsonSingleValue(t, parseJson(text));

describe('JSON single values: spec Appendix D examples', () => {
  // [type, JSON text as in the spec's table, value in the model of src/model/values.ts]
  const examples: [string, string, Value][] = [
    ['boolean', 'true', true],
    ['int', '34', 34],
    ['long', '34', 34n],
    ['float', '1.0', 1],
    ['double', '1.0', 1],
    ['decimal(4,2)', '"14.20"', '14.20'],
    ['date', '"2017-11-16"', 17486],
    ['time', '"22:31:08.123456"', 81068123456n],
    ['timestamp', '"2017-11-16T22:31:08.123456"', 1510871468123456n],
    ['timestamptz', '"2017-11-16T22:31:08.123456+00:00"', 1510871468123456n],
    ['timestamp_ns', '"2017-11-16T22:31:08.123456789"', 1510871468123456789n],
    ['timestamptz_ns', '"2017-11-16T22:31:08.123456789+00:00"', 1510871468123456789n],
    ['string', '"iceberg"', 'iceberg'],
    ['uuid', '"f79c3e09-677c-4bbd-a479-3f349cb785e7"', 'f79c3e09-677c-4bbd-a479-3f349cb785e7'],
    ['fixed[4]', '"000102ff"', Uint8Array.of(0, 1, 2, 0xff)],
    ['binary', '"000102ff"', Uint8Array.of(0, 1, 2, 0xff)],
  ];
  for (const [typeText, text, value] of examples) {
    it(`${typeText}: ${text}`, () => {
      const t = parsePrimitive(typeText);
      expect(json(t, value)).toBe(text);
      expect(readJson(t, text)).toEqual(value);
    });
  }

  it('negative-scale decimals use an exponent equal to the negated scale ("2E+20")', () => {
    const t = parsePrimitive('decimal(1,-20)');
    expect(json(t, '200000000000000000000')).toBe('"2E+20"');
    expect(readJson(t, '"2E+20"')).toBe('200000000000000000000');
  });
});

describe('JSON single values: exact forms other engines require', () => {
  it('writes floats and doubles always with a fraction or exponent (Java isFloatingPointNumber)', () => {
    expect(json(Types.float, 1)).toBe('1.0');
    expect(json(Types.double, 1)).toBe('1.0');
    expect(json(Types.double, -3)).toBe('-3.0');
    expect(json(Types.double, 0)).toBe('0.0');
    expect(json(Types.double, -0)).toBe('-0.0');
    expect(json(Types.double, 1e21)).toBe('1e+21');
    expect(json(Types.double, 0.342343242342342)).toBe('0.342343242342342');
    // shortest text that reads back as the same float32, like Java Float.toString
    expect(json(Types.float, Math.fround(0.1))).toBe('0.1');
    expect(json(Types.float, Math.fround(0.34234))).toBe('0.34234');
    expect(json(Types.float, Math.fround(3.4028234663852886e38))).toBe('3.4028235e+38');
    expect(json(Types.float, 0.1)).toBe('0.1'); // rounded to float32 first, like toBinary
  });

  it('writes decimals with exactly scale digits and rejects values that do not fit', () => {
    const t = Types.decimal(16, 2);
    expect(json(t, '12345.00')).toBe('"12345.00"');
    expect(json(t, '-0.50')).toBe('"-0.50"');
    expect(readJson(t, '"12345.5"')).toBe('12345.50');
    expect(() => readJson(t, '"1.234"')).toThrow(/at most 2 fraction digits/);
    expect(() => readJson(Types.decimal(3, 2), '"10.00"')).toThrow(/at most 3 digits/);
  });

  it('writes timestamptz with +00:00 and reads Z and other offsets as Java does', () => {
    expect(json(Types.timestamptz, 0n)).toBe('"1970-01-01T00:00:00+00:00"');
    expect(readJson(Types.timestamptz, '"2017-11-16T22:31:08.123456Z"')).toBe(1510871468123456n);
    expect(readJson(Types.timestamptz, '"2017-11-16T14:31:08.123456-08:00"')).toBe(1510871468123456n);
    expect(() => readJson(Types.timestamptz, '"2017-11-16T22:31:08"')).toThrow(/zone offset/);
    expect(() => readJson(Types.timestamp, '"2017-11-16T22:31:08+00:00"')).toThrow(/no zone offset/);
  });

  it('writes time fractions as 6 digits and timestamp_ns as 9, none when zero; handles pre-epoch', () => {
    expect(json(Types.time, 12345n)).toBe('"00:00:00.012345"');
    expect(json(Types.time, 81068000000n)).toBe('"22:31:08"');
    expect(json(Types.time, 81068100000n)).toBe('"22:31:08.100000"');
    expect(json(Types.timestampNs, 1n)).toBe('"1970-01-01T00:00:00.000000001"');
    expect(json(Types.timestamp, -1n)).toBe('"1969-12-31T23:59:59.999999"');
    expect(readJson(Types.timestamp, '"1969-12-31T23:59:59.999999"')).toBe(-1n);
    expect(readJson(Types.time, '"22:31:08.1"')).toBe(81068100000n);
    expect(readJson(Types.time, '"22:31"')).toBe(81060000000n);
    expect(() => readJson(Types.time, '"22:31:08.1234567"')).toThrow(/at most 6 fraction digits/);
    expect(readJson(Types.time, '"22:31:08.123456000"')).toBe(81068123456n);
    expect(() => readJson(Types.date, '"2023-02-30"')).toThrow(/valid calendar date/);
  });

  it('reads uppercase hex and uuids (Java writes uppercase hex) and writes lowercase', () => {
    expect(readJson(Types.binary, '"0A0BFF"')).toEqual(Uint8Array.of(10, 11, 255));
    expect(readJson(Types.uuid, '"F79C3E09-677C-4BBD-A479-3F349CB785E7"')).toBe('f79c3e09-677c-4bbd-a479-3f349cb785e7');
    expect(() => readJson(Types.fixed(5), '"0102"')).toThrow(/exactly 5 bytes/);
    expect(() => readJson(Types.uuid, '"f79c3e09677c4bbda4793f349cb785e7"')).toThrow(/8-4-4-4-12/);
  });

  it('keeps longs beyond 2^53 exact through text', () => {
    expect(readJson(Types.long, '-9223372036854775808')).toBe(-9223372036854775808n);
    expect(json(Types.long, 9223372036854775807n)).toBe('9223372036854775807');
    expect(() => readJson(Types.long, '9223372036854775808')).toThrow(/64-bit integer/);
    expect(() => readJson(Types.int, '2147483648')).toThrow(/32-bit integer/);
  });

  it('null reads and writes as null for every type; unknown accepts only null', () => {
    expect(toJsonSingleValue(Types.unknown, null)).toBe(null);
    expect(fromJsonSingleValue(Types.string, null)).toBe(null);
    expect(() => fromJsonSingleValue(Types.unknown, 1)).toThrow(/always null/);
  });

  it('writes non-finite doubles as Jackson does and reads them back', () => {
    expect(json(Types.double, NaN)).toBe('"NaN"');
    expect(Number.isNaN(readJson(Types.double, '"NaN"'))).toBe(true);
    expect(readJson(Types.float, '"-Infinity"')).toBe(-Infinity);
  });
});

describe('binary single values (Appendix D; bounds)', () => {
  const cases: [string, Value, string][] = [
    ['boolean', true, '01'],
    ['boolean', false, '00'],
    ['int', 34, '22000000'],
    ['int', -1, 'ffffffff'],
    ['long', 34n, '2200000000000000'],
    ['float', 1, '0000803f'],
    ['double', 1, '000000000000f03f'],
    ['date', 17486, '4e440000'],
    ['time', 81068000000n, '008307e012000000'],
    ['decimal(4,2)', '14.20', '058c'],
    ['decimal(4,2)', '0.00', '00'],
    ['decimal(4,2)', '-0.01', 'ff'],
    ['decimal(4,2)', '1.28', '0080'],
    ['decimal(4,2)', '-1.29', 'ff7f'],
    ['string', 'iceberg', '69636562657267'],
    ['string', 'é😀', 'c3a9f09f9880'],
    ['uuid', 'f79c3e09-677c-4bbd-a479-3f349cb785e7', 'f79c3e09677c4bbda4793f349cb785e7'],
    ['fixed[3]', Uint8Array.of(1, 2, 3), '010203'],
    ['binary', new Uint8Array(0), ''],
  ];
  for (const [typeText, value, hex] of cases) {
    it(`${typeText} ${typeof value === 'bigint' ? value + 'n' : value instanceof Uint8Array ? toHex(value) : JSON.stringify(value)} ⇄ ${hex}`, () => {
      const t = parsePrimitive(typeText);
      expect(toHex(toBinary(t, value))).toBe(hex);
      expect(fromBinary(t, fromHex(hex))).toEqual(value);
    });
  }

  it('encodes the spec uuid as the bytes listed in Appendix B', () => {
    expect(toHex(uuidToBytes('f79c3e09-677c-4bbd-a479-3f349cb785e7')).toUpperCase()).toBe('F79C3E09677C4BBDA4793F349CB785E7');
  });

  it('reads bounds written before a type promotion (int→long, float→double, date→timestamp)', () => {
    expect(fromBinary(Types.long, fromHex('feffffff'))).toBe(-2n);
    expect(fromBinary(Types.double, toBinary(Types.float, 1.5))).toBe(1.5);
    expect(fromBinary(Types.timestamp, toBinary(Types.date, 1))).toBe(86_400_000_000n);
    expect(fromBinary(Types.timestampNs, toBinary(Types.date, -1))).toBe(-86_400_000_000_000n);
    expect(() => fromBinary(Types.int, fromHex('01'))).toThrow(/expected 4 bytes, found 1/);
  });

  it('sign-extends decimal bytes to a fixed width', () => {
    expect(toHex(unscaledToBytes(-2n, 4))).toBe('fffffffe');
    expect(toHex(unscaledToBytes(1420n, 16))).toBe('0000000000000000000000000000058c');
    expect(unscaledFromBytes(fromHex('fffffffe'))).toBe(-2n);
    expect(() => unscaledToBytes(1n << 40n, 4)).toThrow(/needs 6 bytes/);
  });

  it('round-trips arbitrary values of every primitive (property)', () => {
    const arbs: [PrimitiveType, fc.Arbitrary<Value>][] = [
      [Types.int, fc.integer()],
      [Types.long, fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })],
      [Types.double, fc.double({ noNaN: true })],
      [Types.float, fc.float({ noNaN: true })],
      [Types.timestamptzNs, fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })],
      [Types.timestamp, fc.bigInt({ min: -(10n ** 17n), max: 10n ** 17n })],
      [Types.date, fc.integer({ min: -700000, max: 2900000 })],
      [Types.time, fc.bigInt({ min: 0n, max: 86_400_000_000n - 1n })],
      [Types.string, fc.string({ unit: 'grapheme' })],
      [Types.binary, fc.uint8Array()],
      [Types.uuid, fc.uuid()],
      [Types.decimal(38, 5), fc.bigInt({ min: -(10n ** 38n) + 1n, max: 10n ** 38n - 1n }).map((u) => formatDec(u, 5))],
    ];
    for (const [t, arb] of arbs) {
      fc.assert(
        fc.property(arb, (v) => {
          expect(fromBinary(t, toBinary(t, v))).toEqual(v);
          expect(readJson(t, json(t, v))).toEqual(v);
        }),
        { numRuns: 200 },
      );
    }
  });
});

function formatDec(u: bigint, scale: number): string {
  const neg = u < 0n;
  const d = (neg ? -u : u).toString().padStart(scale + 1, '0');
  return (neg ? '-' : '') + d.slice(0, d.length - scale) + '.' + d.slice(d.length - scale);
}

describe('compareValues (bound order)', () => {
  it('orders doubles as Java Double.compare: -0.0 < +0.0 < Infinity < NaN', () => {
    const sorted = [NaN, Infinity, 0, -0, -Infinity, 1.5].sort((a, b) => compareValues(Types.double, a, b));
    expect(sorted.map((x) => (Object.is(x, -0) ? '-0' : String(x)))).toEqual(['-Infinity', '-0', '0', '1.5', 'Infinity', 'NaN']);
  });

  it('orders strings by code point (UTF-8 bytes), not UTF-16 units', () => {
    // U+FFFD is below U+1F600 in code points, but its UTF-16 unit 0xFFFD is above the surrogate 0xD83D
    expect(compareValues(Types.string, '\uFFFD', '😀')).toBe(-1);
    expect('\uFFFD' < '😀').toBe(false);
    expect(compareValues(Types.string, 'ab', 'abc')).toBe(-1);
    expect(compareValues(Types.string, 'b', 'abc')).toBe(1);
  });

  it('orders binary unsigned and decimals by value', () => {
    expect(compareValues(Types.binary, Uint8Array.of(0x7f), Uint8Array.of(0x80))).toBe(-1);
    expect(compareValues(Types.binary, Uint8Array.of(1), Uint8Array.of(1, 0))).toBe(-1);
    expect(compareValues(Types.decimal(5, 2), '-1.50', '-1.05')).toBe(-1);
    expect(compareValues(Types.decimal(5, 2), '10.00', '9.99')).toBe(1);
    expect(compareValues(Types.uuid, '00000000-0000-0000-0000-000000000000', 'f79c3e09-677c-4bbd-a479-3f349cb785e7')).toBe(-1);
    expect(compareValues(Types.long, -(2n ** 63n), 2n ** 63n - 1n)).toBe(-1);
  });

  it('agrees with the byte order of the binary string encoding (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        const byBytes = Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
        expect(compareValues(Types.string, a, b)).toBe(byBytes);
      }),
    );
  });
});
