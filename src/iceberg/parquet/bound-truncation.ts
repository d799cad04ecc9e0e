/**
 * Truncated column bounds, as Java's metrics mode `truncate(N)` (the default is truncate(16),
 * `write.metadata.metrics.default`) writes them for string and binary columns only
 * (`ParquetMetrics.truncateLowerBound` / `truncateUpperBound`):
 *
 * - a lower bound is the value's prefix (N code points of a string, N bytes of a binary);
 * - an upper bound is the prefix with its last incrementable unit incremented (`UnicodeUtil.
 *   truncateStringMax`, `BinaryUtil.truncateBinaryMax`), so it still sorts after every value; when no
 *   unit can be incremented (all U+10FFFF / all 0xFF) there is no valid bound and it is omitted.
 *
 * Spec "Manifests": bounds must be lower/upper bounds of all non-null, non-NaN values; a too-small
 * upper bound would make readers skip files that hold matching rows.
 */

const MAX_CODE_POINT = 0x10ffff;

/** Code points of `s` (well-formed or not: a lone surrogate counts as one). */
function codePoints(s: string): number[] {
  const out: number[] = [];
  for (const ch of s) out.push(ch.codePointAt(0)!);
  return out;
}

/** The first `length` code points of `s`: a valid lower bound of `s`. */
export function truncateStringMin(s: string, length: number): string {
  if (s.length <= length) return s; // fewer UTF-16 units than `length` means fewer code points too
  const cps = codePoints(s);
  return cps.length <= length ? s : String.fromCodePoint(...cps.slice(0, length));
}

/**
 * A string of at most `length` code points that sorts after `s` (code point order), or null when none
 * exists. Unlike old Java versions, the increment skips the surrogate range U+D800–U+DFFF, which is not
 * a valid scalar value and cannot be encoded as UTF-8.
 */
export function truncateStringMax(s: string, length: number): string | null {
  if (s.length <= length) return s;
  const cps = codePoints(s);
  if (cps.length <= length) return s;
  const prefix = cps.slice(0, length);
  for (let i = length - 1; i >= 0; i--) {
    let next = prefix[i]! + 1;
    if (next >= 0xd800 && next <= 0xdfff) next = 0xe000;
    if (next <= MAX_CODE_POINT) {
      prefix[i] = next;
      return String.fromCodePoint(...prefix.slice(0, i + 1));
    }
  }
  return null;
}

/** The first `length` bytes of `b`: a valid lower bound of `b`. */
export function truncateBinaryMin(b: Uint8Array, length: number): Uint8Array {
  return b.length <= length ? b : b.slice(0, length);
}

/** At most `length` bytes that sort after `b` (unsigned lexicographic), or null when none exists. */
export function truncateBinaryMax(b: Uint8Array, length: number): Uint8Array | null {
  if (b.length <= length) return b;
  for (let i = length - 1; i >= 0; i--) {
    if (b[i] !== 0xff) {
      const out = b.slice(0, i + 1);
      out[i]! += 1;
      return out;
    }
  }
  return null;
}
