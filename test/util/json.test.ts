import { describe, expect, it } from 'vitest';
import { parseJson, stringifyJson, RawJson, asLong } from '../../src/util/json.js';

describe('lossless JSON', () => {
  it('keeps longs beyond 2^53 exact in both directions', () => {
    const text = '{"snapshot-id":9223372036854775807,"min":-9223372036854775808,"small":42,"f":1.5}';
    const v = parseJson(text);
    expect(v['snapshot-id']).toBe(9223372036854775807n);
    expect(v.min).toBe(-9223372036854775808n);
    expect(v.small).toBe(42);
    expect(v.f).toBe(1.5);
    expect(stringifyJson(v)).toBe(text);
    expect(asLong(v.small, 'small')).toBe(42n);
  });

  it('parses every integer as bigint on request and writes raw float text verbatim', () => {
    expect(parseJson('[1, 2.0, -3]', { bigints: 'all' })).toEqual([1n, 2, -3n]);
    expect(stringifyJson({ d: new RawJson('1.0') })).toBe('{"d":1.0}');
  });

  it('handles escapes, unicode and nesting, and rejects garbage with the offset', () => {
    const v = parseJson('{"a":"x\\u00e9\\n\\"😀","b":[true,false,null,{}],"__proto__":1}');
    expect(v.a).toBe('xé\n"😀');
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(v.__proto__).toBe(1);
    expect(() => parseJson('{"a":}')).toThrow(/offset 5/);
    expect(() => parseJson('[1] x')).toThrow(/end of input/);
  });

  it('pretty-prints like JSON.stringify for plain values', () => {
    const plain = { a: [1, { b: 'c' }], d: {}, e: [] as number[], f: null };
    expect(stringifyJson(plain, 2)).toBe(JSON.stringify(plain, null, 2));
  });
});
