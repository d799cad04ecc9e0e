/**
 * Column text in the binlog's row images: the bytes of a utf8 / utf8mb4 / latin1 column, decoded
 * exactly as zongji decodes them (so a row reads the same through either decoder).
 */
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

/** The text decoder for a column charset, or undefined where floe leaves the column to zongji. */
export function textDecoder(charset: string | null): TextDecode | undefined {
  switch (charset) {
    case 'utf8mb4':
    case 'utf8mb3':
    case 'utf8':
      return utf8Text;
    case 'latin1':
      return cp1252Text;
    default:
      return undefined;
  }
}
