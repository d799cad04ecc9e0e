/**
 * Column text in the binlog's row images: the bytes of a column decoded in its charset exactly as
 * zongji decodes them (so a row reads the same through either decoder). utf8 / utf8mb4 and latin1 by
 * Buffer's own slice decoders; every other charset by iconv-lite (schema/charsets.ts).
 */
import iconv from 'iconv-lite';
import { iconvEncoding } from '../../schema/charsets.js';

/** Buffer's own slice decoders (C++ fast paths; `toString` adds encoding dispatch on every call). */
interface FastSlices {
  utf8Slice(start: number, end: number): string;
  latin1Slice(start: number, end: number): string;
}

// MySQL's latin1 is cp1252; zongji decodes it with iconv-lite's cp1252, whose 0x80–0x9F row
// is below (0xfffd where cp1252 has no character). The rest of the bytes are ISO-8859-1.
const CP1252_HIGH = [
  0x20ac, 0xfffd, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0xfffd, 0x17d, 0xfffd,
  0xfffd, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0xfffd, 0x17e, 0x178,
];

export type TextDecode = (buf: Buffer, start: number, end: number) => string;

const utf8Text: TextDecode = (buf, start, end) => (buf as unknown as FastSlices).utf8Slice(start, end);

const cp1252Text: TextDecode = (buf, start, end) => {
  let special = false;
  for (let i = start; i < end; i++) {
    const b = buf[i]!;
    if (b >= 0x80 && b < 0xa0) {
      special = true;
      break;
    }
  }
  if (!special) return (buf as unknown as FastSlices).latin1Slice(start, end);
  let s = '';
  for (let i = start; i < end; i++) {
    const b = buf[i]!;
    s += String.fromCharCode(b >= 0x80 && b < 0xa0 ? CP1252_HIGH[b - 0x80]! : b);
  }
  return s;
};

/**
 * The text decoder for a column charset (`null`: utf8), or undefined for a charset floe cannot
 * decode (type-mapping.ts refuses such columns when the table is captured).
 */
export function textDecoder(charset: string | null): TextDecode | undefined {
  switch (charset ?? 'utf8') {
    case 'utf8mb4':
    case 'utf8mb3':
    case 'utf8':
      return utf8Text;
    case 'latin1':
      return cp1252Text;
  }
  const encoding = iconvEncoding(charset);
  if (encoding === undefined) return undefined;
  // A leading U+FEFF is column data, not a byte-order mark: the charset's byte order is fixed, and
  // the server keeps the character when it converts the column for query results.
  return (buf, start, end) => iconv.decode(buf.subarray(start, end), encoding, { stripBOM: false });
}
