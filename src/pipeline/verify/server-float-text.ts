/**
 * The server's text of a double, reproduced from the value: what `CAST(x * 1e0 AS CHAR)` prints, the
 * canonical text of FLOAT and DOUBLE columns in verification checksums (source/mysql/verify/
 * canonical-sql.ts). JavaScript's `String(x)` differs (exponent forms, `1e+21` vs `1e21`, where it
 * switches to them), and so do MySQL and MariaDB from each other, so the server's algorithm is
 * reproduced: `my_gcvt(x, MY_GCVT_ARG_DOUBLE, width)` of MySQL's strings/dtoa.cc (MariaDB has the same
 * function) —
 *
 * - digits: David Gay's dtoa in mode 4 with `width` significant digits at most — the shortest digits
 *   that read back as x (JavaScript's `toExponential()` gives the same, both shortest-then-closest),
 *   or x correctly rounded to `width` digits when the shortest are longer (`toExponential(width - 1)`;
 *   a tie there needs a binary fraction ending exactly on the rounding digit, which no double that
 *   needs 17 digits has);
 * - format: fixed ('f') when the digits fit the width and the decimal exponent lies in [-14, 15]
 *   (MAX_DECPT_FOR_F_FORMAT = DBL_DIG = 15), else 'e' with no '+' and no exponent padding (`1e21`,
 *   `1.5e-7`), its digits re-rounded when mantissa, point and exponent exceed the width.
 *
 * The width is what each server passes: MySQL 8.0 prints an item's double in MAX_DOUBLE_STR_LENGTH
 * = 22 characters (so a negative 17-digit double with a 3-digit exponent prints 16 digits — the text
 * is then not exact, and verification compares such values at that precision), MariaDB 10.x in its
 * whole conversion buffer (every double exact). MariaDB also prints -0 as 0 (and stores -0 as 0).
 * Which applies is decided by asking the server to print a set of probe values and keeping the
 * variant that reproduces all of them (`calibrateFloatText`); when none does, float columns are left
 * out of checksums (and said so).
 */

export interface FloatTextStyle {
  readonly width: number;
  /** How -0 prints: '-0' (MySQL) or '0' (MariaDB). */
  readonly negativeZero: string;
}

const MAX_DECPT_FOR_F_FORMAT = 15;

/** The candidate styles, most common first. */
const STYLES: readonly FloatTextStyle[] = [
  { width: 22, negativeZero: '-0' },
  { width: 341, negativeZero: '0' },
  { width: 341, negativeZero: '-0' },
  { width: 22, negativeZero: '0' },
];

/** Values whose texts tell the styles (and the format rules) apart. */
export const FLOAT_PROBES: readonly number[] = [
  0, -0, 1, -1, 0.1, 100, 1e15, 1e16, 123456789012345.6, 1234567890123456.8, 1e-14, 1.5e-15, 0.30000000000000004, 1.2345678901234567e-308,
  -1.2345678901234567e-308, -1.2345678901234567e300, 1.2345678901234567e300, 5e-324, -5e-324, 1.7976931348623157e308, -1.7976931348623157e308,
  -2.2250738585072014e-308, 3.4028234663852886e38, -1.1754943508222875e-38, 1.2345678901234567e-100, -1.2345678901234567e-99, 9.999999999999998e22,
  -123.456, 0.000123456789012345, -0.000001, 12345678901234567890, Math.fround(0.1), Math.fround(3.14159), Math.fround(-1.17549435e-38),
];

/** Digits (no point) and decimal exponent of |x| as dtoa mode 4 with `n` digits at most gives them. */
function digitsOf(x: number, n: number): { digits: string; decpt: number } {
  const a = Math.abs(x);
  let text = a.toExponential();
  let e = text.indexOf('e');
  let digits = text.slice(0, e).replace('.', '');
  if (digits.length > n) {
    text = a.toExponential(Math.max(0, n - 1));
    e = text.indexOf('e');
    digits = text.slice(0, e).replace('.', '').replace(/0+$/, '');
    if (digits === '') digits = '0';
  }
  return { digits, decpt: Number(text.slice(e + 1)) + 1 };
}

/** `my_gcvt(x, MY_GCVT_ARG_DOUBLE, style.width)` (module header); x finite. */
export function serverFloatText(x: number, style: FloatTextStyle): string {
  // no server stores these; a lake value that is one never equals the server's text
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return Object.is(x, -0) ? style.negativeZero : '0';
  let width = style.width;
  const negative = x < 0;
  if (negative) width--;
  let { digits, decpt } = digitsOf(x, width);
  let len = digits.length;
  const expLen = 1 + (decpt >= 101 || decpt <= -99 ? 1 : 0) + (decpt >= 11 || decpt <= -9 ? 1 : 0);
  const haveSpace = (decpt <= 0 ? len - decpt + 2 : decpt > 0 && decpt < len ? len + 1 : decpt) <= width;
  const forceE = decpt <= 0 && width <= 2 - decpt && width >= 3 + expLen;
  const fixed =
    (haveSpace || (decpt <= width && (decpt >= -1 || (decpt === -2 && (len > 1 || !forceE))) && !forceE)) &&
    (!haveSpace || (decpt >= -MAX_DECPT_FOR_F_FORMAT + 1 && (decpt <= MAX_DECPT_FOR_F_FORMAT || len > decpt)));
  const sign = negative ? '-' : '';
  if (fixed) {
    // (a fixed form chosen within a width of 21 or more always has room for all 17 digits: the
    // server's re-rounding of fixed forms never applies to these widths)
    if (decpt <= 0) return `${sign}0.${'0'.repeat(-decpt)}${digits}`;
    if (decpt < len) return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
    return sign + digits + '0'.repeat(decpt - len);
  }
  let exponent = decpt - 1;
  let room = width;
  let exponentSign = '';
  if (exponent < 0) {
    exponent = -exponent;
    room--;
    exponentSign = '-';
  }
  room -= 1 + expLen;
  if (len > 1) room--;
  if (room < len) {
    ({ digits } = digitsOf(x, Math.max(1, room)));
    len = digits.length;
  }
  return `${sign}${digits[0]}${len > 1 ? `.${digits.slice(1)}` : ''}e${exponentSign}${exponent}`;
}

/** The style reproducing every probe text the server printed (`FLOAT_PROBES` order), or undefined. */
export function calibrateFloatText(serverTexts: readonly string[]): FloatTextStyle | undefined {
  return STYLES.find((style) => FLOAT_PROBES.every((v, i) => serverFloatText(v, style) === serverTexts[i]));
}
