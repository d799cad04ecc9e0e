/**
 * Which MySQL character sets floe reads column text in, from the binlog's row images (which carry a
 * column's bytes in its own charset; the snapshot's text protocol gets them converted by the server).
 * MySQL's names are mostly iconv-lite's, with four kinds of exception (mapped below, as zongji maps
 * them so that both decoders read the same text): the utf8 aliases; MySQL's latin1, which is cp1252;
 * the Unicode charsets stored big-endian; names iconv-lite spells otherwise (ujis is EUC-JP, eucjpms
 * its Microsoft variant, for which EUC-JP is the closest decoder; macce is Mac Central European).
 */
import iconv from 'iconv-lite';

const ICONV_NAMES: Readonly<Record<string, string>> = {
  utf8: 'utf8',
  utf8mb3: 'utf8',
  utf8mb4: 'utf8',
  latin1: 'cp1252',
  ucs2: 'utf16-be',
  utf16: 'utf16-be',
  utf16le: 'utf16-le',
  utf32: 'utf32-be',
  ujis: 'eucjp',
  eucjpms: 'eucjp',
  macce: 'maccenteuro',
};

/**
 * The iconv-lite encoding of MySQL charset `charset` (`null`: a column without one, read as utf8),
 * or undefined for the charsets iconv-lite has no decoder for (dec8, geostd8, hp8, keybcs2, swe7).
 */
export function iconvEncoding(charset: string | null): string | undefined {
  const name = charset === null ? 'utf8' : (ICONV_NAMES[charset] ?? charset);
  return iconv.encodingExists(name) ? name : undefined;
}
