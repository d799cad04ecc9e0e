/**
 * Single-value serializations of format/spec.md Appendix D, over the value model of
 * src/model/values.ts:
 *
 * - binary (`toBinary` / `fromBinary`): the form of manifest lower/upper bounds. Ints, longs, floats and
 *   the date/time types little-endian; uuid 16 bytes big-endian; decimal the unscaled value as minimal
 *   two's-complement big-endian; strings UTF-8; fixed/binary as is.
 * - JSON (`toJsonSingleValue` / `fromJsonSingleValue`): the form of `initial-default` /
 *   `write-default` and of `floe scan` output. Written exactly as the docs/iceberg-writer-checklist.md §2 requires (floats with
 *   a fraction, decimals with exactly S digits, timestamptz with `+00:00`, lowercase uuid, hex bytes);
 *   read leniently, accepting what Java and PyIceberg write (`Z`, uppercase hex, trimmed fractions).
 *
 * Only primitive types have single values here: Java rejects non-null defaults on struct, list and map
 * (`NestedField.castDefault`), and floe never needs them.
 */
export { fromBinary, toBinary, unscaledFromBytes, unscaledToBytes, uuidFromBytes, uuidToBytes } from './single-value-binary.js';
export { fromJsonSingleValue, toJsonSingleValue } from './single-value-json.js';
export {    compareValues } from './value-compare.js';
