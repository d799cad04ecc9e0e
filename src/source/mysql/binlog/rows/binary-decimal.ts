/**
 * DECIMAL as the binlog carries it (NEWDECIMAL, strings/decimal.cc decimal2bin), read into the value
 * model's canonical decimal text — one of the binlog column readers (column-readers.ts).
 */
import type { ColumnReader } from './row-cursor.js';

const DIG_TO_BYTES = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];

/** decimal2bin's groups for DECIMAL(precision, scale) and the value's size in bytes (decimal_bin_size). */
interface DecimalLayout {
  readonly intg0: number;
  readonly frac0: number;
  readonly frac0x: number;
  readonly headBytes: number;
  readonly tailBytes: number;
  readonly size: number;
}

function decimalLayout(precision: number, scale: number): DecimalLayout {
  const intg = precision - scale;
  const intg0 = Math.floor(intg / 9);
  const frac0 = Math.floor(scale / 9);
  const frac0x = scale - frac0 * 9;
  const headBytes = DIG_TO_BYTES[intg - intg0 * 9]!;
  const tailBytes = DIG_TO_BYTES[frac0x]!;
  return { intg0, frac0, frac0x, headBytes, tailBytes, size: headBytes + intg0 * 4 + frac0 * 4 + tailBytes };
}

/** The bytes a DECIMAL(precision, scale) value takes in a row image (decimal_bin_size). */
export function decimalBytes(precision: number, scale: number): number {
  return decimalLayout(precision, scale).size;
}

/**
 * decimal2bin (strings/decimal.cc): the integer digits in groups of 9 (a leading partial group of
 * DIG_TO_BYTES[intg % 9] bytes), then the fraction digits likewise (a trailing partial group);
 * each group big-endian, the first byte's top bit flipped, all bytes inverted for negatives.
 * Produces the value model's canonical text: no leading zeros, exactly `scale` fraction digits,
 * no negative zero.
 */
export function decimalReader(precision: number, scale: number): ColumnReader {
  const layout = decimalLayout(precision, scale);
  const text = precision - scale <= 15 && scale <= 15 ? smallDecimalText(scale, layout) : decimalText(scale, layout);
  const size = layout.size;
  return (c) => {
    const start = c.pos;
    c.pos = start + size;
    const negative = (c.buf[start]! & 0x80) === 0;
    return text(c.buf, start, negative);
  };
}

/** The text of the value at `start`, its sign read already. */
type DecimalText = (b: Buffer, start: number, negative: boolean) => string;

/** Any DECIMAL: a string per digit group. */
function decimalText(scale: number, { intg0, frac0, frac0x, headBytes, tailBytes }: DecimalLayout): DecimalText {
  return (b, start, negative) => {
    const mask = negative ? 0xff : 0;
    let p = start;
    let text = '';
    let nonZero = false;
    if (headBytes > 0) {
      const v = decimalGroup(b, p, headBytes, mask, start);
      p += headBytes;
      if (v !== 0) {
        text = String(v);
        nonZero = true;
      }
    }
    for (let k = 0; k < intg0; k++, p += 4) {
      const v = decimalGroup(b, p, 4, mask, start);
      if (nonZero) text += String(v).padStart(9, '0');
      else if (v !== 0) {
        text = String(v);
        nonZero = true;
      }
    }
    if (!nonZero) text = '0';
    if (scale > 0) {
      text += '.';
      for (let k = 0; k < frac0; k++, p += 4) {
        const v = decimalGroup(b, p, 4, mask, start);
        if (v !== 0) nonZero = true;
        text += String(v).padStart(9, '0');
      }
      if (tailBytes > 0) {
        const v = decimalGroup(b, p, tailBytes, mask, start);
        if (v !== 0) nonZero = true;
        text += String(v).padStart(frac0x, '0');
      }
    }
    return negative && nonZero ? '-' + text : text;
  };
}

/** One big-endian digit group of `n` bytes, inverted by `mask`, with the sign bit of byte `start` flipped back. */
function decimalGroup(b: Buffer, p: number, n: number, mask: number, start: number): number {
  let v = 0;
  for (let k = 0; k < n; k++) v = v * 256 + ((p + k === start ? b[p + k]! ^ 0x80 : b[p + k]!) ^ mask);
  return v;
}

/** '.d…d' for every fraction of 1–3 digits, by scale: the common scales' fraction text without a padStart. */
const FRACTION_TEXT: (readonly string[] | undefined)[] = [];

function fractionTexts(scale: number): readonly string[] | undefined {
  if (scale < 1 || scale > 3) return undefined;
  return (FRACTION_TEXT[scale] ??= Array.from({ length: 10 ** scale }, (_, i) => '.' + String(i).padStart(scale, '0')));
}

/**
 * At most 15 integer and 15 fraction digits: each part accumulates exactly in a number (below
 * 10^15 < 2^53) and becomes text once, instead of a string per digit group. The text is the same
 * (the row decoder's cross-check against zongji covers every precision and scale).
 */
function smallDecimalText(scale: number, { intg0, frac0, frac0x, headBytes, tailBytes }: DecimalLayout): DecimalText {
  const fractions = fractionTexts(scale);
  const tailScale = 10 ** frac0x;
  return (b, start, negative) => {
    const mask = negative ? 0xff : 0;
    let p = start;
    let whole = 0;
    if (headBytes > 0) {
      whole = decimalGroup(b, p, headBytes, mask, start);
      p += headBytes;
    }
    for (let k = 0; k < intg0; k++, p += 4) whole = whole * 1e9 + decimalGroup(b, p, 4, mask, start);
    let fraction = 0;
    for (let k = 0; k < frac0; k++, p += 4) fraction = fraction * 1e9 + decimalGroup(b, p, 4, mask, start);
    if (tailBytes > 0) fraction = fraction * tailScale + decimalGroup(b, p, tailBytes, mask, start);
    const text = scale === 0 ? String(whole) : String(whole) + (fractions && fraction < fractions.length ? fractions[fraction]! : '.' + String(fraction).padStart(scale, '0'));
    return negative && (whole !== 0 || fraction !== 0) ? '-' + text : text;
  };
}
