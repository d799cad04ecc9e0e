/**
 * The server's text of doubles, reproduced (src/pipeline/verify/server-float-text.ts), against texts
 * the two servers printed: `SELECT CAST(<value> * 1e0 AS CHAR)` on Oracle MySQL 8.0.31 and on MariaDB
 * 10.11 (the servers the suite runs against), recorded once with the values below — the edges of the
 * format rules (f / e switch at 1e-15 and 1e16, 17-digit mantissas, 3-digit exponents that make MySQL
 * round to 15 or 16 digits, subnormals, the extremes). test/pipeline/verify/canonical-row.test.ts
 * compares thousands more against the live servers.
 */
import { describe, expect, it } from 'vitest';
import { calibrateFloatText, FLOAT_PROBES, serverFloatText } from '../../../src/pipeline/verify/server-float-text.js';

const MYSQL = { width: 22, negativeZero: '-0' };
const MARIADB = { width: 341, negativeZero: '0' };

/** [value, MySQL 8.0.31, MariaDB 10.11] */
const GOLDEN: readonly [number, string, string][] = [
  [0e0, "0", "0"],
  [1e0, "1", "1"],
  [-1e0, "-1", "-1"],
  [1e-1, "0.1", "0.1"],
  [-1e-1, "-0.1", "-0.1"],
  [1e2, "100", "100"],
  [1e15, "1e15", "1e15"],
  [1e16, "1e16", "1e16"],
  [-1e16, "-1e16", "-1e16"],
  [1e21, "1e21", "1e21"],
  [1.234567890123456e14, "123456789012345.6", "123456789012345.6"],
  [1.2345678901234568e15, "1234567890123456.8", "1234567890123456.8"],
  [1.2345678901234568e16, "1.2345678901234568e16", "1.2345678901234568e16"],
  [1e-14, "0.00000000000001", "0.00000000000001"],
  [1e-15, "0.000000000000001", "0.000000000000001"],
  [1.5e-15, "0.0000000000000015", "0.0000000000000015"],
  [-1.5e-15, "-0.0000000000000015", "-0.0000000000000015"],
  [3.0000000000000004e-1, "0.30000000000000004", "0.30000000000000004"],
  [1.2345678901234567e-308, "1.234567890123457e-308", "1.2345678901234567e-308"],
  [-1.2345678901234567e-308, "-1.23456789012346e-308", "-1.2345678901234567e-308"],
  [-1.2345678901234567e300, "-1.234567890123457e300", "-1.2345678901234567e300"],
  [1.2345678901234567e300, "1.2345678901234567e300", "1.2345678901234567e300"],
  [-1.2345678901234566e-99, "-1.234567890123457e-99", "-1.2345678901234566e-99"],
  [-1.2345678901234566e-9, "-1.2345678901234566e-9", "-0.0000000012345678901234566"],
  [-1.2345678901234567e99, "-1.2345678901234567e99", "-1.2345678901234567e99"],
  [5e-324, "5e-324", "5e-324"],
  [-5e-324, "-5e-324", "-5e-324"],
  [2.2250738585072014e-308, "2.225073858507201e-308", "2.2250738585072014e-308"],
  [1.7976931348623157e308, "1.7976931348623157e308", "1.7976931348623157e308"],
  [-1.7976931348623157e308, "-1.797693134862316e308", "-1.7976931348623157e308"],
  [3.4028234663852886e38, "3.4028234663852886e38", "3.4028234663852886e38"],
  [-1.1754943508222875e-38, "-1.175494350822288e-38", "-1.1754943508222875e-38"],
  [9.999999999999997e22, "9.999999999999997e22", "9.999999999999997e22"],
  [-1.23456e2, "-123.456", "-123.456"],
  [1.23456789012345e-4, "0.000123456789012345", "0.000123456789012345"],
  [-1e-6, "-0.000001", "-0.000001"],
  [1.2345678901234567e19, "1.2345678901234567e19", "1.2345678901234567e19"],
  [5e-1, "0.5", "0.5"],
  [2.5e0, "2.5", "2.5"],
  [1e100, "1e100", "1e100"],
  [1.5e-100, "1.5e-100", "1.5e-100"],
  [1.0000000149011612e-1, "0.10000000149011612", "0.10000000149011612"],
  [3.141590118408203e0, "3.141590118408203", "3.141590118408203"],
  [1e-7, "0.0000001", "0.0000001"],
  [9.999999999999998e13, "99999999999999.98", "99999999999999.98"],
  [9.999999999999999e14, "999999999999999.9", "999999999999999.9"],
  [9.999999999999998e15, "9.999999999999998e15", "9.999999999999998e15"],
];

describe('serverFloatText', () => {
  it('prints what MySQL 8 prints', () => {
    expect(GOLDEN.map(([v]) => serverFloatText(v, MYSQL))).toEqual(GOLDEN.map(([, mysql]) => mysql));
  });

  it('prints what MariaDB prints', () => {
    expect(GOLDEN.map(([v]) => serverFloatText(v, MARIADB))).toEqual(GOLDEN.map(([, , mariadb]) => mariadb));
  });

  it('prints -0 as each server does', () => {
    expect(serverFloatText(-0, MYSQL)).toBe('-0');
    expect(serverFloatText(-0, MARIADB)).toBe('0');
  });

  it('tells the servers apart from their probe texts, and trusts neither when a text differs', () => {
    expect(calibrateFloatText(FLOAT_PROBES.map((v) => serverFloatText(v, MYSQL)))).toEqual(MYSQL);
    expect(calibrateFloatText(FLOAT_PROBES.map((v) => serverFloatText(v, MARIADB)))).toEqual(MARIADB);
    const odd = FLOAT_PROBES.map((v) => serverFloatText(v, MYSQL));
    odd[odd.length - 1] = 'something else';
    expect(calibrateFloatText(odd)).toBeUndefined();
  });
});
