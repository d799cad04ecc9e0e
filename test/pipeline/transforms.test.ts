/**
 * Column transforms: hash / mask / drop rules, their patterns, and the canonical text they work on,
 * checked against independently computed values.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseDate, parseTimestamp, parseTime } from '../../src/model/values.js';
import { canonicalText, compileTransforms, maskText, transformedType, valueTransformer } from '../../src/pipeline/transforms.js';
import { Types } from '../../src/iceberg/spec/types.js';

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('column transforms', () => {
  it('first matching rule wins; globs match one name part, regexes the whole name', () => {
    const lookup = compileTransforms([
      { column: 'shop.users.email', type: 'mask', keepLast: 3 },
      { column: 'shop.*.email', type: 'hash', salt: 's' },
      { column: '/^crm\\.contacts\\.(phone|fax)$/', type: 'drop' },
    ]);
    expect(lookup('shop', 'users', 'email')).toEqual({ kind: 'mask', keepLast: 3 });
    expect(lookup('shop', 'orders', 'email')).toEqual({ kind: 'hash', salt: 's' });
    expect(lookup('shop', 'orders', 'emails')).toBeUndefined();
    expect(lookup('shop.x', 'orders', 'email')).toBeUndefined(); // '*' never crosses a '.'
    expect(lookup('crm', 'contacts', 'fax')).toEqual({ kind: 'drop' });
    expect(lookup('crm', 'contacts', 'name')).toBeUndefined();
  });

  it('refuses patterns that are not db.table.column', () => {
    expect(() => compileTransforms([{ column: 'users.email', type: 'drop' }])).toThrow(/database\.table\.column/);
    expect(() => compileTransforms([{ column: '/(/', type: 'drop' }])).toThrow(/regular expression/);
  });

  it('hash is SHA-256 of salt ‖ canonical text, lowercase hex; null stays null', () => {
    const hash = valueTransformer({ kind: 'hash', salt: 'pepper' }, Types.string);
    expect(hash('alice@example.com')).toBe(sha('pepperalice@example.com'));
    expect(hash(null)).toBeNull();
    const hashLong = valueTransformer({ kind: 'hash', salt: '' }, Types.long);
    expect(hashLong(18446744073709551615n)).toBe(sha('18446744073709551615'));
    const hashDate = valueTransformer({ kind: 'hash', salt: 'x' }, Types.date);
    expect(hashDate(parseDate('1990-01-02'))).toBe(sha('x1990-01-02'));
  });

  it('mask keeps the last characters (code points), everything else becomes *', () => {
    expect(maskText('+82-10-1234-5678', 4)).toBe('************5678');
    expect(maskText('abc', 5)).toBe('abc');
    expect(maskText('😀😀😀', 1)).toBe('**😀');
    expect(maskText('secret', 0)).toBe('******');
    const mask = valueTransformer({ kind: 'mask', keepLast: 2 }, Types.int);
    expect(mask(-1234)).toBe('***34');
  });

  it('canonical text follows the Iceberg single-value forms, independent of the process zone', () => {
    expect(canonicalText(Types.timestamp, parseTimestamp('2024-02-29T12:34:56.123456'))).toBe('2024-02-29T12:34:56.123456');
    expect(canonicalText(Types.timestamptz, parseTimestamp('2024-02-29T12:34:56Z'))).toBe('2024-02-29T12:34:56+00:00');
    expect(canonicalText(Types.time, parseTime('07:08:09.5'))).toBe('07:08:09.5');
    expect(canonicalText(Types.binary, new Uint8Array([0, 255, 16]))).toBe('00ff10');
    expect(canonicalText(Types.decimal(10, 2), '-12.50')).toBe('-12.50');
    expect(canonicalText(Types.double, -0)).toBe('-0');
    expect(canonicalText(Types.boolean, true)).toBe('true');
  });

  it('hashed and masked columns are strings; dropped ones keep no type of their own', () => {
    expect(transformedType({ kind: 'hash', salt: '' }, Types.long)).toEqual(Types.string);
    expect(transformedType({ kind: 'mask', keepLast: 1 }, Types.date)).toEqual(Types.string);
    expect(() => valueTransformer({ kind: 'drop' }, Types.int)).toThrow();
  });
});
