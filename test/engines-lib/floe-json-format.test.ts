/**
 * engines/lib/floe_json.py — which prints every engine's values in floe scan's JSON form — agrees
 * with floe's own writer (toJsonSingleValue + stringifyJson) on the values where the two languages
 * format differently: doubles and floats (JavaScript's exponent thresholds, shortest float32 text),
 * negative zero, non-finite floats, decimals at every scale, dates outside 0000–9999, negative
 * timestamps, nanosecond types, binary, uuid, and strings with control and non-BMP characters. Runs
 * with the machine's python3 (floe_json.py needs only the standard library), so it is part of
 * `npm test` and needs no engine.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { toJsonSingleValue } from '../../src/iceberg/spec/single-value.js';
import { typeFromJson } from '../../src/iceberg/spec/schema-json.js';
import type { Value } from '../../src/model/values.js';
import { stringifyJson } from '../../src/util/json.js';

const LIB = fileURLToPath(new URL('../../engines/lib/', import.meta.url));
const python = spawnSync('python3', ['--version']).status === 0;

/** [Iceberg type, floe's value, the canonical value floe_json.py takes (as JSON)]. */
const CASES: [string, Value, unknown][] = [];
for (const d of [0.1, 1e21, 1e20, 123456789012345680000, 1e-7, 1.5e-7, 0.000001, -2.5e-7, 5e-324, 1.7976931348623157e308, -0, 0, 1, -1.5, 3.141592653589793, 2 ** 53 + 2, 1 / 3, NaN, Infinity, -Infinity]) {
  CASES.push(['double', d, Number.isFinite(d) ? d : String(d)]);
}
for (const f of [0.1, 3.4028235e38, 16777217, 1e-10, -1.5, 7, 0.3, 1.17549435e-38, 1e-45, 65504.5]) {
  const v = Math.fround(f);
  CASES.push(['float', v, v]);
}
for (const [type, text, unscaled] of [
  ['decimal(12,2)', '-12.30', '-1230'],
  ['decimal(12,2)', '0.05', '5'],
  ['decimal(38,10)', '-0.0000000001', '-1'],
  ['decimal(20,0)', '18446744073709551615', '18446744073709551615'],
  ['decimal(38,30)', '-99999999.999999999999999999999999999999', '-99999999999999999999999999999999999999'],
] as const) {
  CASES.push([type, text, { int: unscaled }]);
}
for (const days of [0, -1, -719528, -719529, 2932896, 2932897, -1000000, 19000]) CASES.push(['date', days, days]);
for (const micros of [0n, 1n, 86_399_999_999n, 43_200_500_000n]) CASES.push(['time', micros, { int: String(micros) }]);
for (const t of ['timestamp', 'timestamptz']) {
  for (const micros of [0n, -1n, 1_709_210_096_123_456n, -62_135_596_800_000_000n, 253_402_300_799_999_999n, -30_610_224_000_000_001n]) CASES.push([t, micros, { int: String(micros) }]);
}
for (const t of ['timestamp_ns', 'timestamptz_ns']) {
  for (const nanos of [0n, -1n, 1_709_210_096_123_456_789n]) CASES.push([t, nanos, { int: String(nanos) }]);
}
for (const s of ['', 'plain', 'quote " back \\ slash', 'tab\there\nnew\r\u0001\u001f\u007f', '한글 ü €', '😀 astral', '\u2028\u2029']) CASES.push(['string', s, s]);
CASES.push(['uuid', 'f79c3e09-677c-4bbd-a479-3f349cb785e7', 'F79C3E09-677C-4BBD-A479-3F349CB785E7']);
for (const hex of ['', '00ff10', 'deadbeef']) {
  const bytes = Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));
  CASES.push(['binary', bytes, { hex }]);
  if (hex.length > 0) CASES.push([`fixed[${hex.length / 2}]`, bytes, { hex }]);
}
CASES.push(['long', -9223372036854775808n, { int: '-9223372036854775808' }]);
CASES.push(['int', -2147483648, -2147483648]);
CASES.push(['boolean', true, true]);

const SCRIPT = `
import json, sys
sys.path.insert(0, sys.argv[1])
import floe_json
def decode(v):
    if isinstance(v, dict) and "int" in v: return int(v["int"])
    if isinstance(v, dict) and "hex" in v: return bytes.fromhex(v["hex"])
    if isinstance(v, str) and v in ("NaN", "Infinity", "-Infinity"): return float(v)
    return v
for line in sys.stdin:
    t, v = json.loads(line)
    print(floe_json.to_json(t, floe_json.canonical(t, decode(v))))
`;

describe.skipIf(!python)('engines/lib/floe_json.py prints what floe scan prints', () => {
  it('for every value where Python and JavaScript format differently', () => {
    // -0 survives JSON only as a literal: send it as "-0.0" text Python reads back as -0.0
    const input = CASES.map(([t, , c]) => (Object.is(c, -0) ? `["${t}", -0.0]` : stringifyJson([t, c as never]))).join('\n') + '\n';
    const out = execFileSync('python3', ['-c', SCRIPT, LIB], { input, encoding: 'utf8' }).split('\n').slice(0, -1);
    const expected = CASES.map(([t, v]) => stringifyJson(toJsonSingleValue(typeFromJson(t), v)));
    const diffs = CASES.map(([t, v], i) => ({ type: t, value: String(v), floe: expected[i], python: out[i] })).filter((d) => d.floe !== d.python);
    expect(diffs).toEqual([]);
  });
});
