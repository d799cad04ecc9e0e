/**
 * A cursor over the tokens of one DDL statement (ddl-lexer.ts) with the small vocabulary the DDL
 * parsers share: keywords, punctuation, identifiers, qualified table names, balanced parentheses,
 * and errors that quote the statement and the offset where parsing stopped.
 */
import { FloeError } from '../../../util/errors.js';
import { tokenize, type Token } from './ddl-lexer.js';
import type { TableId } from '../schema/table-schema.js';

const SUBSYSTEM = 'source.mysql.ddl';

export class DdlCursor {
  readonly tokens: Token[];
  i = 0;

  constructor(
    readonly sql: string,
    readonly defaultDatabase: string,
  ) {
    this.tokens = tokenize(sql);
  }

  peek(offset = 0): Token {
    return this.tokens[Math.min(this.i + offset, this.tokens.length - 1)]!;
  }

  next(): Token {
    const t = this.peek();
    if (t.kind !== 'eof') this.i++;
    return t;
  }

  isWord(word: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.kind === 'word' && t.text.toLowerCase() === word;
  }

  acceptWord(...words: string[]): boolean {
    for (let k = 0; k < words.length; k++) if (!this.isWord(words[k]!, k)) return false;
    this.i += words.length;
    return true;
  }

  expectWord(word: string): void {
    if (!this.acceptWord(word)) throw this.error(`expected ${word.toUpperCase()}`);
  }

  isPunct(text: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.kind === 'punct' && t.text === text;
  }

  acceptPunct(text: string): boolean {
    if (!this.isPunct(text)) return false;
    this.i++;
    return true;
  }

  expectPunct(text: string): void {
    if (!this.acceptPunct(text)) throw this.error(`expected '${text}'`);
  }

  atEnd(): boolean {
    const t = this.peek();
    return t.kind === 'eof' || (t.kind === 'punct' && t.text === ';');
  }

  error(expected: string): FloeError {
    const t = this.peek();
    const found = t.kind === 'eof' ? 'the end of the statement' : JSON.stringify(this.sql.slice(t.start, t.start + 40));
    return new FloeError(SUBSYSTEM, 'invalid-data', `cannot parse DDL ${JSON.stringify(abbreviate(this.sql))}: ${expected} at offset ${t.start}, found ${found}`);
  }

  /** An identifier: bare word or back-quoted (a string is accepted where MySQL accepts one, e.g. names in some clients). */
  identifier(what = 'an identifier'): string {
    const t = this.peek();
    if (t.kind === 'word' || t.kind === 'quoted-ident') {
      this.i++;
      return t.text;
    }
    throw this.error(`expected ${what}`);
  }

  tableName(): TableId {
    const first = this.identifier('a table name');
    if (this.isPunct('.') && (this.peek(1).kind === 'word' || this.peek(1).kind === 'quoted-ident')) {
      this.i++;
      return { database: first, table: this.identifier('a table name') };
    }
    return { database: this.defaultDatabase, table: first };
  }

  /** Skips a balanced parenthesised group starting at '('; returns its inner source text. */
  balanced(): string {
    const open = this.peek();
    this.expectPunct('(');
    let depth = 1;
    for (;;) {
      const t = this.next();
      if (t.kind === 'eof') throw this.error(`expected ')' closing the '(' at offset ${open.start}`);
      if (t.kind === 'punct' && t.text === '(') depth++;
      else if (t.kind === 'punct' && t.text === ')') {
        depth--;
        if (depth === 0) return this.sql.slice(open.end, t.start).trim();
      }
    }
  }

  /** Skips tokens up to (not including) the next top-level ',' or ')' or the end; returns the skipped text. */
  skipToSeparator(): string {
    const start = this.peek().start;
    let end = start;
    while (!this.atEnd() && !this.isPunct(',') && !this.isPunct(')')) {
      if (this.isPunct('(')) {
        this.balanced();
        end = this.tokens[this.i - 1]!.end;
      } else end = this.next().end;
    }
    return this.sql.slice(start, end).trim();
  }
}

function abbreviate(sql: string): string {
  const one = sql.replace(/\s+/g, ' ').trim();
  return one.length > 200 ? one.slice(0, 197) + '…' : one;
}
