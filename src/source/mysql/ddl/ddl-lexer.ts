/**
 * Tokens of a MySQL/MariaDB DDL statement as the server logs it in a binlog Query event — just
 * enough SQL lexing for the DDL parser (ddl-parser.ts): identifiers (bare or `back-quoted`, with
 * `` doubling), string literals ('…' and "…" with '' / "" doubling and backslash escapes, optional
 * `_charset` introducer or N prefix), hexadecimal (X'..', 0x..) and bit (B'..', 0b..) literals,
 * numbers, punctuation and operators.
 *
 * Comments: `/* … *\/`, `-- ` (two dashes then whitespace, MySQL's rule) and `#` to the end of the
 * line are skipped. Executable comments `/*!NNNNN … *\/` (MySQL) and `/*M!NNNNN … *\/` (MariaDB) are
 * what the server itself executed (mysqldump and the server's own SHOW CREATE output use them, e.g.
 * `/*!50100 PARTITION BY …*\/`), so their content is lexed as code; a version above the server's
 * would have been skipped by the server, but floe cannot know the server's version here and the
 * statements that reach the binlog were executed by it — treating them as code is what the server did
 * for every statement floe can see (the binlog holds statements after the server accepted them).
 */
import { FloeError } from '../../../util/errors.js';
import { unescapeChar } from '../schema/defaults.js';

type TokenKind =
  /** Bare word: keyword or unquoted identifier (text as written). */
  | 'word'
  /** `back-quoted` identifier (text unquoted). */
  | 'quoted-ident'
  /** '…' or "…" string (text = value, escapes applied). */
  | 'string'
  /** X'…' / 0x… (bytes in `bytes`). */
  | 'hex'
  /** B'…' / 0b… (bits text in `text`). */
  | 'bits'
  | 'number'
  /** Any punctuation or operator: ( ) , . ; = @ + - * / < > ! etc. */
  | 'punct'
  | 'eof';

export interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  /** Offsets of the token in the statement text (for raw slices of expressions). */
  readonly start: number;
  readonly end: number;
  /** Hex literals: the bytes. */
  readonly bytes?: Uint8Array;
  /** String literals: the `_charset` introducer or 'n' (national), lower-case. */
  readonly introducer?: string;
}

const SUBSYSTEM = 'source.mysql.ddl';

function isIdentStart(c: string): boolean {
  return /[A-Za-z_$\u0080-\uffff]/.test(c);
}

function isIdentPart(c: string): boolean {
  return /[A-Za-z0-9_$\u0080-\uffff]/.test(c);
}

const TWO_CHAR_OPS = new Set(['<=', '>=', '<>', '!=', ':=', '||', '&&', '<<', '>>', '->']);

/** Splits a statement into tokens (ending with one 'eof' token). */
export function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let executableDepth = 0;
  const n = sql.length;
  const push = (kind: TokenKind, text: string, start: number, extra: Partial<Token> = {}): void => {
    out.push({ kind, text, start, end: i, ...extra });
  };
  while (i < n) {
    const c = sql[i]!;
    // whitespace
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    // comments
    if (c === '#') {
      while (i < n && sql[i] !== '\n') i++;
      continue;
    }
    if (c === '-' && sql[i + 1] === '-' && (i + 2 >= n || /\s/.test(sql[i + 2]!))) {
      while (i < n && sql[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && sql[i + 1] === '*') {
      const executable = /^\/\*M?!(\d{5,6})?/.exec(sql.slice(i, i + 10));
      if (executable) {
        // lex the comment's content as code; its closing */ is skipped when reached
        i += executable[0].length;
        executableDepth++;
        continue;
      }
      const close = sql.indexOf('*/', i + 2);
      if (close < 0) throw new FloeError(SUBSYSTEM, 'invalid-data', `unterminated /* comment at offset ${i}`);
      i = close + 2;
      continue;
    }
    if (c === '*' && sql[i + 1] === '/' && executableDepth > 0) {
      executableDepth--;
      i += 2;
      continue;
    }
    const start = i;
    // back-quoted identifier
    if (c === '`') {
      let text = '';
      i++;
      for (;;) {
        if (i >= n) throw new FloeError(SUBSYSTEM, 'invalid-data', `unterminated \` identifier at offset ${start}`);
        if (sql[i] === '`') {
          if (sql[i + 1] === '`') {
            text += '`';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        text += sql[i++];
      }
      push('quoted-ident', text, start);
      continue;
    }
    // hex / bit literals: X'..' B'..' 0x.. 0b..
    if ((c === 'x' || c === 'X') && sql[i + 1] === "'") {
      const close = sql.indexOf("'", i + 2);
      if (close < 0) throw new FloeError(SUBSYSTEM, 'invalid-data', `unterminated X'' literal at offset ${i}`);
      const hex = sql.slice(i + 2, close);
      i = close + 1;
      push('hex', hex, start, { bytes: hexBytes(hex) });
      continue;
    }
    if ((c === 'b' || c === 'B') && sql[i + 1] === "'") {
      const close = sql.indexOf("'", i + 2);
      if (close < 0) throw new FloeError(SUBSYSTEM, 'invalid-data', `unterminated B'' literal at offset ${i}`);
      const bits = sql.slice(i + 2, close);
      i = close + 1;
      push('bits', bits, start);
      continue;
    }
    if (c === '0' && (sql[i + 1] === 'x' || sql[i + 1] === 'X') && /[0-9a-fA-F]/.test(sql[i + 2] ?? '')) {
      let j = i + 2;
      while (j < n && /[0-9a-fA-F]/.test(sql[j]!)) j++;
      if (j >= n || !isIdentPart(sql[j]!)) {
        const hex = sql.slice(i + 2, j);
        i = j;
        push('hex', hex, start, { bytes: hexBytes(hex.length % 2 ? '0' + hex : hex) });
        continue;
      }
    }
    if (c === '0' && (sql[i + 1] === 'b' || sql[i + 1] === 'B') && /[01]/.test(sql[i + 2] ?? '')) {
      let j = i + 2;
      while (j < n && /[01]/.test(sql[j]!)) j++;
      if (j >= n || !isIdentPart(sql[j]!)) {
        const bits = sql.slice(i + 2, j);
        i = j;
        push('bits', bits, start);
        continue;
      }
    }
    // strings, with an optional N / _charset introducer
    if (c === "'" || c === '"') {
      const text = readString(sql, i);
      i = text.end;
      push('string', text.value, start);
      continue;
    }
    if ((c === 'n' || c === 'N') && sql[i + 1] === "'") {
      const text = readString(sql, i + 1);
      i = text.end;
      push('string', text.value, start, { introducer: 'n' });
      continue;
    }
    if (c === '_' && /[A-Za-z0-9]/.test(sql[i + 1] ?? '')) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_]/.test(sql[j]!)) j++;
      const introducer = sql.slice(i + 1, j).toLowerCase();
      let k = j;
      while (k < n && /\s/.test(sql[k]!)) k++;
      if (sql[k] === "'" || sql[k] === '"') {
        const text = readString(sql, k);
        i = text.end;
        push('string', text.value, start, { introducer });
        continue;
      }
      if ((sql[k] === 'x' || sql[k] === 'X') && sql[k + 1] === "'") {
        // _binary X'..'
        const close = sql.indexOf("'", k + 2);
        if (close < 0) throw new FloeError(SUBSYSTEM, 'invalid-data', `unterminated X'' literal at offset ${k}`);
        const hex = sql.slice(k + 2, close);
        i = close + 1;
        push('hex', hex, start, { bytes: hexBytes(hex), introducer });
        continue;
      }
      if (sql[k] === '0' && (sql[k + 1] === 'x' || sql[k + 1] === 'X')) {
        let e = k + 2;
        while (e < n && /[0-9a-fA-F]/.test(sql[e]!)) e++;
        const hex = sql.slice(k + 2, e);
        i = e;
        push('hex', hex, start, { bytes: hexBytes(hex.length % 2 ? '0' + hex : hex), introducer });
        continue;
      }
    }
    // numbers: 12, 1.5, .5, 1e3, 1.5E-3
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(sql[i + 1] ?? '') && !isAfterIdentifier(out))) {
      let j = i;
      while (j < n && /[0-9]/.test(sql[j]!)) j++;
      if (sql[j] === '.' && /[0-9]/.test(sql[j + 1] ?? '')) {
        j++;
        while (j < n && /[0-9]/.test(sql[j]!)) j++;
      } else if (sql[j] === '.' && j > i && !/[A-Za-z_`]/.test(sql[j + 1] ?? '')) {
        j++; // "1." is a number
      }
      if ((sql[j] === 'e' || sql[j] === 'E') && /[0-9+-]/.test(sql[j + 1] ?? '')) {
        let k = j + 1;
        if (sql[k] === '+' || sql[k] === '-') k++;
        if (/[0-9]/.test(sql[k] ?? '')) {
          while (k < n && /[0-9]/.test(sql[k]!)) k++;
          j = k;
        }
      }
      // a word starting with digits (MySQL allows identifiers like 1abc)
      if (j < n && isIdentPart(sql[j]!) && !/[eE]/.test(sql[j - 1]!)) {
        while (j < n && isIdentPart(sql[j]!)) j++;
        i = j;
        push('word', sql.slice(start, j), start);
        continue;
      }
      i = j;
      push('number', sql.slice(start, j), start);
      continue;
    }
    if (isIdentStart(c)) {
      let j = i;
      while (j < n && isIdentPart(sql[j]!)) j++;
      i = j;
      push('word', sql.slice(start, j), start);
      continue;
    }
    const two = sql.slice(i, i + 2);
    if (TWO_CHAR_OPS.has(two)) {
      i += 2;
      push('punct', two, start);
      continue;
    }
    i++;
    push('punct', c, start);
  }
  if (executableDepth > 0) throw new FloeError(SUBSYSTEM, 'invalid-data', 'unterminated executable comment /*!');
  out.push({ kind: 'eof', text: '', start: n, end: n });
  return out;
}

/** A '.' right after an identifier is a qualifier dot (`t.1col` is not a number). */
function isAfterIdentifier(out: readonly Token[]): boolean {
  const last = out[out.length - 1];
  return last !== undefined && (last.kind === 'word' || last.kind === 'quoted-ident');
}

function readString(sql: string, at: number): { value: string; end: number } {
  const quote = sql[at];
  let value = '';
  let i = at + 1;
  for (;;) {
    if (i >= sql.length) throw new FloeError(SUBSYSTEM, 'invalid-data', `unterminated string literal at offset ${at}`);
    const ch = sql[i];
    if (ch === quote) {
      if (sql[i + 1] === quote) {
        value += quote;
        i += 2;
        continue;
      }
      i++;
      break;
    }
    if (ch === '\\' && i + 1 < sql.length) {
      // NO_BACKSLASH_ESCAPES is not assumed: the server logs statements as the client wrote them
      const next = sql[i + 1]!;
      // MySQL keeps the backslash of \% and \_ (they matter in LIKE patterns)
      value += next === '%' || next === '_' ? '\\' + next : unescapeChar(next);
      i += 2;
      continue;
    }
    value += ch;
    i++;
  }
  // adjacent string literals concatenate ('a' 'b' = 'ab')
  let j = i;
  while (j < sql.length && /\s/.test(sql[j]!)) j++;
  if (sql[j] === "'" || (sql[j] === '"' && quote === '"')) {
    const rest = readString(sql, j);
    return { value: value + rest.value, end: rest.end };
  }
  return { value, end: i };
}

function hexBytes(hex: string): Uint8Array {
  if (!/^[0-9a-fA-F]*$/.test(hex) || hex.length % 2 !== 0) throw new FloeError(SUBSYSTEM, 'invalid-data', `bad hexadecimal literal X'${hex}': expected an even number of hex digits`);
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}
