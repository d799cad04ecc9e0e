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
import { parseColumnDefinition, parseDefaultValue } from './ddl-column-parser.js';
import { DdlCursor } from './ddl-cursor.js';
import type { AlterAction, AlterTableStatement, ColumnDefinition, ColumnPosition, CreateTableStatement, DdlStatement } from './ddl-statements.js';
import type { TableId } from '../schema/table-schema.js';

/** Parses one statement; `defaultDatabase` qualifies unqualified table names (the event's `USE`). */
export function parseDdl(statement: string, defaultDatabase: string): DdlStatement {
  const p = new Parser(statement, defaultDatabase);
  return p.statement();
}

class Parser extends DdlCursor {
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
      const a = this.tokens[k]!;
      const dot = this.tokens[k + 1]!;
      const b = this.tokens[k + 2]!;
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
          out.push({ kind: 'add-column', column: parseColumnDefinition(this), ifNotExists });
        } while (this.acceptPunct(','));
        this.expectPunct(')');
        return out;
      }
      const column = parseColumnDefinition(this);
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
      const column = parseColumnDefinition(this);
      return [{ kind: 'change-column', from, column, ifExists, ...this.position() }];
    }
    if (this.acceptWord('modify')) {
      this.acceptWord('column');
      const ifExists = this.acceptWord('if', 'exists');
      const column = parseColumnDefinition(this);
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
      if (this.acceptWord('set', 'default')) return [{ kind: 'alter-column-default', name, default: parseDefaultValue(this) }];
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
    return { kind: 'column', column: parseColumnDefinition(this) };
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
}

/** Table options, partitioning and other ALTER clauses that keep every column and value as it is. */
function classifyOption(text: string): AlterAction {
  return { kind: 'no-schema-effect', text };
}
