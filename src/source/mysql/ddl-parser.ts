/**
 * A parser for the MySQL / MariaDB DDL statements that change captured tables, as logged in binlog
 * Query events (ROW format logs DDL as text; DML never appears here). It recognises
 *
 *   ALTER [ONLINE] [IGNORE] TABLE [IF EXISTS] t action[, action…]
 *     ADD [COLUMN] [IF NOT EXISTS] def [FIRST | AFTER c] | ADD [COLUMN] (def, def…)
 *     DROP [COLUMN] [IF EXISTS] c | RENAME COLUMN [IF EXISTS] a TO b
 *     CHANGE [COLUMN] [IF EXISTS] old def [FIRST | AFTER c] | MODIFY [COLUMN] [IF EXISTS] def [FIRST | AFTER c]
 *     ALTER [COLUMN] c SET DEFAULT x | DROP DEFAULT | RENAME [TO | AS] t2
 *     ADD/DROP PRIMARY KEY; indexes, constraints, table options, partitions… (no schema effect or unsupported)
 *   CREATE [OR REPLACE] [TEMPORARY] TABLE [IF NOT EXISTS] t (defs…) [options] [[AS] SELECT…] | LIKE t2
 *   DROP [TEMPORARY] TABLE [IF EXISTS] t[, t…] | RENAME TABLE a TO b[, c TO d] | TRUNCATE [TABLE] t
 *   CREATE/DROP INDEX … ON t | DROP DATABASE d
 *
 * with qualified and unqualified names (the event's default database fills in), back-quoted
 * identifiers, comments and executable comments (ddl-lexer.ts). Anything else is an `other`
 * statement. Column definitions keep their type, nullability, default (literal or expression),
 * comment, generated expression and key attributes (ddl-statements.ts).
 *
 * The parser never evaluates expressions: an expression default is kept as its source text.
 */
import { FloeError } from '../../util/errors.js';
import { tokenize, type Token } from './ddl-lexer.js';
import type {
  AlterAction,
  AlterTableStatement,
  ColumnDefinition,
  ColumnPosition,
  CreateTableStatement,
  DataTypeSpec,
  DdlStatement,
  DefaultSpec,
} from './ddl-statements.js';
import type { TableId } from './table-schema.js';

const SUBSYSTEM = 'source.mysql.ddl';

/** Parses one statement; `defaultDatabase` qualifies unqualified table names (the event's `USE`). */
export function parseDdl(statement: string, defaultDatabase: string): DdlStatement {
  const p = new Parser(statement, defaultDatabase);
  return p.statement();
}

/** Words that end a column definition's attribute list in ALTER (position clauses). */
const POSITION_WORDS = new Set(['first', 'after']);

/** Temporal and function-like defaults that are evaluated per row. */
const NOW_WORDS = new Set(['current_timestamp', 'now', 'localtime', 'localtimestamp', 'current_date', 'current_time', 'curdate', 'curtime', 'sysdate', 'utc_timestamp', 'utc_date', 'utc_time']);

class Parser {
  private readonly tokens: Token[];
  private i = 0;

  constructor(
    private readonly sql: string,
    private readonly defaultDatabase: string,
  ) {
    this.tokens = tokenize(sql);
  }

  // ---- token helpers ----------------------------------------------------------------------------

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.i + offset, this.tokens.length - 1)];
  }

  private next(): Token {
    const t = this.peek();
    if (t.kind !== 'eof') this.i++;
    return t;
  }

  private isWord(word: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.kind === 'word' && t.text.toLowerCase() === word;
  }

  private acceptWord(...words: string[]): boolean {
    for (let k = 0; k < words.length; k++) if (!this.isWord(words[k], k)) return false;
    this.i += words.length;
    return true;
  }

  private expectWord(word: string): void {
    if (!this.acceptWord(word)) throw this.error(`expected ${word.toUpperCase()}`);
  }

  private isPunct(text: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.kind === 'punct' && t.text === text;
  }

  private acceptPunct(text: string): boolean {
    if (!this.isPunct(text)) return false;
    this.i++;
    return true;
  }

  private expectPunct(text: string): void {
    if (!this.acceptPunct(text)) throw this.error(`expected '${text}'`);
  }

  private atEnd(): boolean {
    const t = this.peek();
    return t.kind === 'eof' || (t.kind === 'punct' && t.text === ';');
  }

  private error(expected: string): FloeError {
    const t = this.peek();
    const found = t.kind === 'eof' ? 'the end of the statement' : JSON.stringify(this.sql.slice(t.start, t.start + 40));
    return new FloeError(SUBSYSTEM, 'invalid-data', `cannot parse DDL ${JSON.stringify(abbreviate(this.sql))}: ${expected} at offset ${t.start}, found ${found}`);
  }

  /** An identifier: bare word or back-quoted (a string is accepted where MySQL accepts one, e.g. names in some clients). */
  private identifier(what = 'an identifier'): string {
    const t = this.peek();
    if (t.kind === 'word' || t.kind === 'quoted-ident') {
      this.i++;
      return t.text;
    }
    throw this.error(`expected ${what}`);
  }

  private tableName(): TableId {
    const first = this.identifier('a table name');
    if (this.isPunct('.') && (this.peek(1).kind === 'word' || this.peek(1).kind === 'quoted-ident')) {
      this.i++;
      return { database: first, table: this.identifier('a table name') };
    }
    return { database: this.defaultDatabase, table: first };
  }

  /** Skips a balanced parenthesised group starting at '('; returns its inner source text. */
  private balanced(): string {
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
  private skipToSeparator(): string {
    const start = this.peek().start;
    let end = start;
    while (!this.atEnd() && !this.isPunct(',') && !this.isPunct(')')) {
      if (this.isPunct('(')) {
        this.balanced();
        end = this.tokens[this.i - 1].end;
      } else end = this.next().end;
    }
    return this.sql.slice(start, end).trim();
  }

  // ---- statements -------------------------------------------------------------------------------

  statement(): DdlStatement {
    const verb = this.peek().kind === 'word' ? this.peek().text.toLowerCase() : '';
    switch (verb) {
      case 'alter':
        return this.alter();
      case 'create':
        return this.create();
      case 'drop':
        return this.drop();
      case 'rename':
        return this.renameTables();
      case 'truncate':
        this.next();
        this.acceptWord('table');
        return { kind: 'truncate-table', table: this.tableName() };
      default:
        return this.other(verb);
    }
  }

  private other(verb: string): DdlStatement {
    // best effort: qualified names db.t anywhere in the statement
    const tables: TableId[] = [];
    for (let k = 0; k + 2 < this.tokens.length; k++) {
      const a = this.tokens[k];
      const dot = this.tokens[k + 1];
      const b = this.tokens[k + 2];
      if ((a.kind === 'word' || a.kind === 'quoted-ident') && dot.kind === 'punct' && dot.text === '.' && dot.start === a.end && (b.kind === 'word' || b.kind === 'quoted-ident') && b.start === dot.end) {
        tables.push({ database: a.text, table: b.text });
      }
    }
    return { kind: 'other', verb, tables };
  }

  private alter(): DdlStatement {
    this.expectWord('alter');
    this.acceptWord('online');
    this.acceptWord('ignore');
    if (!this.acceptWord('table')) return this.other('alter');
    const ifExists = this.acceptWord('if', 'exists');
    const table = this.tableName();
    const actions: AlterAction[] = [];
    while (!this.atEnd()) {
      actions.push(...this.alterAction());
      if (!this.acceptPunct(',')) {
        if (this.atEnd()) break;
        // table options and partition clauses may follow without a comma
        const text = this.skipToSeparator();
        if (text) actions.push(classifyOption(text));
        if (this.isPunct(')')) throw this.error("unexpected ')'");
        this.acceptPunct(',');
      }
    }
    const out: AlterTableStatement = { kind: 'alter-table', table, ifExists, actions };
    return out;
  }

  private alterAction(): AlterAction[] {
    const start = this.peek().start;
    const rest = (): string => this.sql.slice(start, this.peek().start).trim();
    if (this.acceptWord('add')) {
      if (this.isWord('primary') || (this.isWord('constraint') && (this.isWord('primary', 1) || this.isWord('primary', 2)))) {
        if (this.acceptWord('constraint') && !this.isWord('primary')) this.identifier();
        this.expectWord('primary');
        this.expectWord('key');
        if (this.acceptWord('using')) this.next();
        return [{ kind: 'add-primary-key', columns: this.keyParts() }, ...this.trailing(start)];
      }
      if (this.isWord('system') && this.isWord('versioning', 1)) {
        this.skipToSeparator();
        return [{ kind: 'unsupported', text: rest(), reason: 'system versioning adds hidden row_start/row_end columns to every row' }];
      }
      if (this.isWord('period')) {
        this.skipToSeparator();
        return [{ kind: 'no-schema-effect', text: rest() }];
      }
      if (['index', 'key', 'unique', 'fulltext', 'spatial', 'foreign', 'constraint', 'check', 'partition', 'vector'].some((w) => this.isWord(w))) {
        this.skipToSeparator();
        return [{ kind: 'no-schema-effect', text: rest() }];
      }
      this.acceptWord('column');
      const ifNotExists = this.acceptWord('if', 'not', 'exists');
      if (this.isPunct('(')) {
        // ADD [COLUMN] (def, def, …): no positions; indexes may be listed too
        this.expectPunct('(');
        const out: AlterAction[] = [];
        do {
          if (['index', 'key', 'unique', 'fulltext', 'spatial', 'foreign', 'constraint', 'check', 'primary'].some((w) => this.isWord(w))) {
            const s = this.peek().start;
            this.skipToSeparator();
            out.push({ kind: 'no-schema-effect', text: this.sql.slice(s, this.peek().start).trim() });
            continue;
          }
          out.push({ kind: 'add-column', column: this.columnDefinition(), ifNotExists });
        } while (this.acceptPunct(','));
        this.expectPunct(')');
        return out;
      }
      const column = this.columnDefinition();
      return [{ kind: 'add-column', column, ifNotExists, ...this.position() }];
    }
    if (this.acceptWord('drop')) {
      if (this.acceptWord('primary', 'key')) return [{ kind: 'drop-primary-key' }];
      if (this.isWord('system') && this.isWord('versioning', 1)) {
        this.skipToSeparator();
        return [{ kind: 'unsupported', text: rest(), reason: 'dropping system versioning deletes the history rows without row events' }];
      }
      if (this.isWord('partition')) {
        this.skipToSeparator();
        return [{ kind: 'unsupported', text: rest(), reason: 'DROP PARTITION deletes rows without writing row events to the binlog' }];
      }
      if (['index', 'key', 'foreign', 'constraint', 'check', 'period'].some((w) => this.isWord(w))) {
        this.skipToSeparator();
        return [{ kind: 'no-schema-effect', text: rest() }];
      }
      this.acceptWord('column');
      const ifExists = this.acceptWord('if', 'exists');
      const name = this.identifier('a column name');
      this.acceptWord('restrict') || this.acceptWord('cascade');
      return [{ kind: 'drop-column', name, ifExists }];
    }
    if (this.acceptWord('rename')) {
      if (this.acceptWord('column')) {
        const ifExists = this.acceptWord('if', 'exists');
        const from = this.identifier('a column name');
        this.expectWord('to');
        return [{ kind: 'rename-column', from, to: this.identifier('a column name'), ifExists }];
      }
      if (this.isWord('index') || this.isWord('key')) {
        this.skipToSeparator();
        return [{ kind: 'no-schema-effect', text: rest() }];
      }
      if (!this.acceptWord('to')) this.acceptWord('as');
      return [{ kind: 'rename-table', to: this.tableName() }];
    }
    if (this.acceptWord('change')) {
      this.acceptWord('column');
      const ifExists = this.acceptWord('if', 'exists');
      const from = this.identifier('a column name');
      const column = this.columnDefinition();
      return [{ kind: 'change-column', from, column, ifExists, ...this.position() }];
    }
    if (this.acceptWord('modify')) {
      this.acceptWord('column');
      const ifExists = this.acceptWord('if', 'exists');
      const column = this.columnDefinition();
      return [{ kind: 'modify-column', column, ifExists, ...this.position() }];
    }
    if (this.isWord('alter')) {
      if (['index', 'key', 'check', 'constraint'].some((w) => this.isWord(w, 1))) {
        this.next();
        this.skipToSeparator();
        return [{ kind: 'no-schema-effect', text: rest() }];
      }
      this.next();
      this.acceptWord('column');
      this.acceptWord('if', 'exists');
      const name = this.identifier('a column name');
      if (this.acceptWord('set', 'default')) return [{ kind: 'alter-column-default', name, default: this.defaultValue() }];
      if (this.acceptWord('drop', 'default')) return [{ kind: 'alter-column-default', name }];
      if (this.acceptWord('set', 'visible') || this.acceptWord('set', 'invisible')) return [{ kind: 'no-schema-effect', text: rest() }];
      throw this.error('expected SET DEFAULT, DROP DEFAULT or SET [IN]VISIBLE');
    }
    if (this.isWord('convert') && this.isWord('to', 1)) {
      this.skipToSeparator();
      return [{ kind: 'unsupported', text: rest(), reason: 'CONVERT TO CHARACTER SET rewrites every text column (characters the new set lacks become ?) without row events' }];
    }
    if (this.isWord('discard') || this.isWord('import')) {
      this.skipToSeparator();
      return [{ kind: 'unsupported', text: rest(), reason: 'tablespace import/discard replaces the rows without row events' }];
    }
    if (this.isWord('truncate') && this.isWord('partition', 1)) {
      this.skipToSeparator();
      return [{ kind: 'unsupported', text: rest(), reason: 'TRUNCATE PARTITION deletes rows without writing row events to the binlog' }];
    }
    if (this.isWord('exchange') && this.isWord('partition', 1)) {
      this.skipToSeparator();
      return [{ kind: 'unsupported', text: rest(), reason: 'EXCHANGE PARTITION swaps rows with another table without row events' }];
    }
    if (this.isWord('with') && this.isWord('system', 1)) {
      this.skipToSeparator();
      return [{ kind: 'unsupported', text: rest(), reason: 'system versioning adds hidden row_start/row_end columns to every row' }];
    }
    // table options, ALGORITHM/LOCK, FORCE, ORDER BY, partitioning, ENABLE/DISABLE KEYS…
    const text = this.skipToSeparator();
    return [classifyOption(text)];
  }

  /** Anything after a complete action up to the next separator (e.g. index options). */
  private trailing(_start: number): AlterAction[] {
    if (this.atEnd() || this.isPunct(',')) return [];
    const text = this.skipToSeparator();
    return text ? [{ kind: 'no-schema-effect', text }] : [];
  }

  private position(): { position?: ColumnPosition } {
    if (this.acceptWord('first')) return { position: { kind: 'first' } };
    if (this.acceptWord('after')) return { position: { kind: 'after', column: this.identifier('a column name') } };
    return {};
  }

  /** `(a, b(10), c DESC)` → column names. */
  private keyParts(): string[] {
    this.expectPunct('(');
    const names: string[] = [];
    do {
      if (this.isPunct('(')) {
        this.balanced(); // functional key part
      } else {
        names.push(this.identifier('a key column'));
        if (this.isPunct('(')) this.balanced(); // prefix length
      }
      this.acceptWord('asc') || this.acceptWord('desc');
    } while (this.acceptPunct(','));
    this.expectPunct(')');
    return names;
  }

  private create(): DdlStatement {
    this.expectWord('create');
    const orReplace = this.acceptWord('or', 'replace');
    const temporary = this.acceptWord('temporary');
    if (!this.acceptWord('table')) {
      // CREATE [UNIQUE|FULLTEXT|SPATIAL] INDEX name [USING …] ON t (…)
      this.acceptWord('online') || this.acceptWord('offline');
      this.acceptWord('unique') || this.acceptWord('fulltext') || this.acceptWord('spatial') || this.acceptWord('vector');
      if (this.acceptWord('index')) {
        this.acceptWord('if', 'not', 'exists');
        this.identifier('an index name');
        if (this.acceptWord('using')) this.next();
        this.expectWord('on');
        return { kind: 'index', table: this.tableName(), text: this.sql };
      }
      return this.other('create');
    }
    const ifNotExists = this.acceptWord('if', 'not', 'exists');
    const table = this.tableName();
    const base = { kind: 'create-table' as const, table, ifNotExists, temporary, orReplace };
    if (this.acceptWord('like')) return { ...base, columns: [], primaryKey: [], like: this.tableName(), asSelect: false };
    if (this.isPunct('(') && this.isWord('like', 1)) {
      this.next();
      this.next();
      const like = this.tableName();
      this.expectPunct(')');
      return { ...base, columns: [], primaryKey: [], like, asSelect: false };
    }
    const columns: ColumnDefinition[] = [];
    const primaryKey: string[] = [];
    if (this.isPunct('(') && !this.isWord('select', 1)) {
      this.expectPunct('(');
      do {
        if (this.isPunct(')')) break;
        const element = this.createElement();
        if (element.kind === 'column') {
          columns.push(element.column);
          if (element.column.primaryKey) primaryKey.push(element.column.name);
        } else if (element.kind === 'primary-key') primaryKey.push(...element.columns);
      } while (this.acceptPunct(','));
      this.expectPunct(')');
    }
    // table options, partitioning, then maybe [AS] SELECT / IGNORE|REPLACE SELECT
    let asSelect = false;
    while (!this.atEnd()) {
      if (this.isWord('select') || (this.isWord('as') && (this.isWord('select', 1) || this.isPunct('(', 1))) || ((this.isWord('ignore') || this.isWord('replace')) && (this.isWord('select', 1) || this.isWord('as', 1)))) {
        asSelect = true;
        break;
      }
      if (this.isPunct('(') && this.isWord('select', 1)) {
        asSelect = true;
        break;
      }
      if (this.isPunct('(')) this.balanced();
      else this.next();
    }
    const out: CreateTableStatement = { ...base, columns, primaryKey, asSelect };
    return out;
  }

  private createElement(): { kind: 'column'; column: ColumnDefinition } | { kind: 'primary-key'; columns: string[] } | { kind: 'other' } {
    if (this.isWord('constraint') && !this.isPunct(',', 1)) {
      // CONSTRAINT [name] PRIMARY KEY / UNIQUE / FOREIGN KEY / CHECK
      this.next();
      if (!['primary', 'unique', 'foreign', 'check'].some((w) => this.isWord(w))) this.identifier();
    }
    if (this.acceptWord('primary', 'key')) {
      if (this.acceptWord('using')) this.next();
      const columns = this.keyParts();
      this.skipToSeparator();
      return { kind: 'primary-key', columns };
    }
    if (['index', 'key', 'unique', 'fulltext', 'spatial', 'foreign', 'check', 'period', 'vector'].some((w) => this.isWord(w))) {
      // `key` and `index` could also be column names, but then they would be back-quoted by every client
      this.skipToSeparator();
      return { kind: 'other' };
    }
    return { kind: 'column', column: this.columnDefinition() };
  }

  private drop(): DdlStatement {
    this.expectWord('drop');
    const temporary = this.acceptWord('temporary');
    if (this.acceptWord('table') || this.acceptWord('tables')) {
      const ifExists = this.acceptWord('if', 'exists');
      const tables: TableId[] = [];
      do tables.push(this.tableName());
      while (this.acceptPunct(','));
      return { kind: 'drop-table', tables, ifExists, temporary };
    }
    if (this.acceptWord('index')) {
      this.acceptWord('if', 'exists');
      this.identifier('an index name');
      this.expectWord('on');
      return { kind: 'index', table: this.tableName(), text: this.sql };
    }
    if (this.acceptWord('database') || this.acceptWord('schema')) {
      this.acceptWord('if', 'exists');
      return { kind: 'drop-database', database: this.identifier('a database name') };
    }
    return this.other('drop');
  }

  private renameTables(): DdlStatement {
    this.expectWord('rename');
    if (!this.acceptWord('table') && !this.acceptWord('tables')) return this.other('rename');
    const renames: { from: TableId; to: TableId }[] = [];
    do {
      this.acceptWord('if', 'exists');
      const from = this.tableName();
      if (this.acceptWord('wait')) this.next();
      else this.acceptWord('nowait');
      this.expectWord('to');
      renames.push({ from, to: this.tableName() });
    } while (this.acceptPunct(','));
    return { kind: 'rename-table', renames };
  }

  // ---- column definitions -----------------------------------------------------------------------

  columnDefinition(): ColumnDefinition {
    const name = this.identifier('a column name');
    const type = this.dataType();
    let nullable: boolean | undefined;
    let dflt: DefaultSpec | undefined;
    let autoIncrement = false;
    let comment: string | undefined;
    let generated: { expression: string; stored: boolean } | undefined;
    let primaryKey = false;
    let unique = false;
    let invisible = false;
    let onUpdate: string | undefined;
    let jsonCheck = type.name === 'json';
    let charset = type.charset;
    let collation = type.collation;
    for (;;) {
      if (this.atEnd() || this.isPunct(',') || this.isPunct(')')) break;
      if (POSITION_WORDS.has(this.peek().kind === 'word' ? this.peek().text.toLowerCase() : '')) break;
      if (this.acceptWord('not', 'null')) nullable = false;
      else if (this.acceptWord('null')) nullable = true;
      else if (this.acceptWord('default')) dflt = this.defaultValue();
      else if (this.acceptWord('auto_increment')) autoIncrement = true;
      else if (this.acceptWord('unique')) {
        unique = true;
        this.acceptWord('key');
      } else if (this.acceptWord('primary', 'key') || this.acceptWord('key')) {
        primaryKey = true;
        nullable = nullable ?? false;
      } else if (this.acceptWord('comment')) comment = this.stringValue();
      else if (this.acceptWord('collate')) collation = this.nameValue();
      else if (this.acceptWord('character', 'set') || this.acceptWord('charset')) charset = this.nameValue();
      else if (this.acceptWord('generated', 'always', 'as') || this.acceptWord('as')) {
        const expression = this.balanced();
        let stored = false;
        if (this.acceptWord('stored') || this.acceptWord('persistent')) stored = true;
        else this.acceptWord('virtual');
        generated = { expression, stored };
      } else if (this.acceptWord('on', 'update')) {
        const s = this.peek().start;
        this.next();
        if (this.isPunct('(')) this.balanced();
        onUpdate = this.sql.slice(s, this.tokens[this.i - 1].end);
      } else if (this.acceptWord('invisible')) invisible = true;
      else if (this.acceptWord('visible')) invisible = false;
      else if (this.isWord('check') || (this.isWord('constraint') && (this.isWord('check', 1) || this.isWord('check', 2)))) {
        if (this.acceptWord('constraint') && !this.isWord('check')) this.identifier();
        this.expectWord('check');
        const expr = this.balanced();
        if (expr.replace(/[\s`]/g, '').toLowerCase() === `json_valid(${name.toLowerCase()})`) jsonCheck = true;
      } else if (this.acceptWord('references')) {
        this.tableName();
        if (this.isPunct('(')) this.balanced();
        // MATCH …, ON DELETE …, ON UPDATE … (reference options)
        while (this.isWord('match') || (this.isWord('on') && (this.isWord('delete', 1) || this.isWord('update', 1)))) {
          if (this.acceptWord('match')) this.next();
          else {
            this.next();
            this.next();
            if (this.acceptWord('set')) this.next();
            else if (this.acceptWord('no')) this.next();
            else this.next();
          }
        }
      } else if (this.acceptWord('with', 'system', 'versioning') || this.acceptWord('without', 'system', 'versioning')) {
        // MariaDB per-column versioning: no effect on the row images floe reads
      } else if (this.acceptWord('serial', 'default', 'value')) {
        autoIncrement = true;
        nullable = false;
        unique = true;
      } else {
        // COLUMN_FORMAT x, STORAGE x, SRID n, ENGINE_ATTRIBUTE = 'x', COMPRESSED[=zlib], REF_SYSTEM_ID = n …
        this.next();
        if (this.acceptPunct('=')) this.next();
        else if (this.isPunct('(')) this.balanced();
        else if (['column_format', 'storage', 'srid'].includes(this.tokens[this.i - 1].text.toLowerCase())) this.next();
      }
    }
    return {
      name,
      type: { ...type, ...(charset !== undefined ? { charset } : {}), ...(collation !== undefined ? { collation } : {}) },
      ...(nullable !== undefined ? { nullable } : {}),
      ...(dflt !== undefined ? { default: dflt } : {}),
      autoIncrement,
      ...(comment !== undefined ? { comment } : {}),
      ...(generated ? { generated } : {}),
      primaryKey,
      unique,
      invisible,
      ...(onUpdate !== undefined ? { onUpdate } : {}),
      jsonCheck,
    };
  }

  private stringValue(): string {
    const t = this.next();
    if (t.kind !== 'string') {
      this.i--;
      throw this.error('expected a string literal');
    }
    return t.text;
  }

  /** A charset/collation name: word, quoted identifier, string, or the word BINARY. */
  private nameValue(): string {
    this.acceptPunct('=');
    const t = this.next();
    if (t.kind === 'word' || t.kind === 'quoted-ident' || t.kind === 'string') return t.text.toLowerCase();
    this.i--;
    throw this.error('expected a character set or collation name');
  }

  dataType(): DataTypeSpec {
    const first = this.identifier('a data type').toLowerCase();
    let name = first;
    // multi-word type names
    if (first === 'double' && this.acceptWord('precision')) name = 'double precision';
    else if ((first === 'char' || first === 'character') && this.acceptWord('varying')) name = 'varchar';
    else if (first === 'national') {
      const w = this.identifier('a data type').toLowerCase();
      name = this.acceptWord('varying') || w === 'varchar' ? 'nvarchar' : 'nchar';
    } else if (first === 'nchar' && this.acceptWord('varying')) name = 'nvarchar';
    else if (first === 'long') {
      if (this.acceptWord('varbinary')) name = 'long varbinary';
      else if (this.acceptWord('varchar') || this.acceptWord('char', 'varying')) name = 'long varchar';
      else name = 'long';
    }
    const args: string[] = [];
    if (this.isPunct('(')) {
      this.next();
      for (;;) {
        const t = this.next();
        if (t.kind === 'number' || t.kind === 'string') args.push(t.text);
        else if (t.kind === 'word') args.push(t.text); // e.g. FLOAT(53) never, but be tolerant
        else if (t.kind === 'hex') args.push(Buffer.from(t.bytes ?? []).toString('latin1'));
        else throw this.error('expected a type argument');
        if (this.acceptPunct(')')) break;
        this.expectPunct(',');
      }
    }
    let unsigned = false;
    let zerofill = false;
    let charset: string | undefined;
    let collation: string | undefined;
    let binaryCollation = false;
    for (;;) {
      if (this.acceptWord('unsigned')) unsigned = true;
      else if (this.acceptWord('signed')) unsigned = false;
      else if (this.acceptWord('zerofill')) {
        zerofill = true;
        unsigned = true; // ZEROFILL implies UNSIGNED
      } else if (this.acceptWord('character', 'set') || this.acceptWord('charset')) charset = this.nameValue();
      else if (this.acceptWord('collate')) collation = this.nameValue();
      else if (this.isWord('binary') && !this.isWord('default', 1) && ['char', 'varchar', 'character', 'text', 'tinytext', 'mediumtext', 'longtext', 'enum', 'set', 'nchar', 'nvarchar', 'long', 'long varchar'].includes(name)) {
        this.next();
        binaryCollation = true;
      } else if (this.acceptWord('ascii')) charset = 'latin1';
      else if (this.acceptWord('unicode')) charset = 'ucs2';
      else if (this.acceptWord('byte')) charset = 'binary';
      else break;
    }
    return {
      name,
      args,
      unsigned,
      zerofill,
      ...(charset !== undefined ? { charset } : {}),
      ...(collation !== undefined ? { collation } : {}),
      ...(binaryCollation ? { binaryCollation } : {}),
    };
  }

  defaultValue(): DefaultSpec {
    const t = this.peek();
    if (this.acceptWord('null')) return { kind: 'null' };
    if (this.acceptWord('true')) return { kind: 'literal', value: '1', literalKind: 'boolean' };
    if (this.acceptWord('false')) return { kind: 'literal', value: '0', literalKind: 'boolean' };
    if (t.kind === 'punct' && (t.text === '-' || t.text === '+') && this.peek(1).kind === 'number') {
      this.next();
      const n = this.next().text;
      return { kind: 'literal', value: t.text === '-' ? negate(n) : n, literalKind: 'number' };
    }
    if (t.kind === 'number') {
      this.next();
      return { kind: 'literal', value: t.text, literalKind: 'number' };
    }
    if (t.kind === 'string') {
      this.next();
      return { kind: 'literal', value: t.text, literalKind: 'string' };
    }
    if (t.kind === 'hex') {
      this.next();
      return { kind: 'literal', value: t.bytes ?? new Uint8Array(), literalKind: 'hex' };
    }
    if (t.kind === 'bits') {
      this.next();
      return { kind: 'literal', value: t.text, literalKind: 'bits' };
    }
    if (t.kind === 'punct' && t.text === '(') {
      return { kind: 'expression', expression: `(${this.balanced()})` };
    }
    if (t.kind === 'word') {
      const w = t.text.toLowerCase();
      // typed literals: DATE '2020-01-01', TIME '…', TIMESTAMP '…'
      if ((w === 'date' || w === 'time' || w === 'timestamp') && this.peek(1).kind === 'string') {
        this.next();
        return { kind: 'literal', value: this.next().text, literalKind: 'string' };
      }
      if (NOW_WORDS.has(w) || this.isPunct('(', 1) || w === 'next' || w === 'previous') {
        const s = t.start;
        this.next();
        if (this.isPunct('(')) this.balanced();
        else if (w === 'next' || w === 'previous') {
          // NEXT VALUE FOR seq / PREVIOUS VALUE FOR seq (MariaDB sequences)
          this.acceptWord('value');
          this.acceptWord('for');
          this.tableName();
        }
        return { kind: 'expression', expression: this.sql.slice(s, this.tokens[this.i - 1].end) };
      }
    }
    throw this.error('expected a default value (literal, NULL or expression)');
  }
}

function negate(number: string): string {
  return number.startsWith('-') ? number.slice(1) : '-' + number;
}

function abbreviate(sql: string): string {
  const one = sql.replace(/\s+/g, ' ').trim();
  return one.length > 200 ? one.slice(0, 197) + '…' : one;
}

/** Table options and other ALTER clauses that keep every column and value as it is. */
function classifyOption(text: string): AlterAction {
  const lower = text.toLowerCase();
  if (/^(partition\s+by|remove\s+partitioning|add\s+partition|coalesce\s+partition|reorganize\s+partition|rebuild\s+partition|analyze\s+partition|check\s+partition|optimize\s+partition|repair\s+partition)/.test(lower)) {
    return { kind: 'no-schema-effect', text };
  }
  return { kind: 'no-schema-effect', text };
}
