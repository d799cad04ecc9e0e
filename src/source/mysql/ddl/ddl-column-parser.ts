/**
 * Column definitions in DDL (`name type [attributes…]`, ddl-statements.ts): data types with their
 * arguments and attributes (UNSIGNED, ZEROFILL, CHARACTER SET, COLLATE, BINARY), nullability,
 * DEFAULT (literal, NULL, or an expression kept as text: CURRENT_TIMESTAMP[(n)], (expr), f(), NEXT
 * VALUE FOR seq), AUTO_INCREMENT, keys, COMMENT, generated columns (VIRTUAL / STORED / PERSISTENT),
 * ON UPDATE, visibility, CHECK (json_valid(col)) — MariaDB's JSON alias — and REFERENCES.
 */
import type { ColumnDefinition, DataTypeSpec, DefaultSpec } from './ddl-statements.js';
import type { DdlCursor } from './ddl-cursor.js';

/** Words that end a column definition's attribute list in ALTER (position clauses). */
const POSITION_WORDS = new Set(['first', 'after']);

/** Temporal and function-like defaults that are evaluated per row. */
const NOW_WORDS = new Set(['current_timestamp', 'now', 'localtime', 'localtimestamp', 'current_date', 'current_time', 'curdate', 'curtime', 'sysdate', 'utc_timestamp', 'utc_date', 'utc_time']);

export function parseColumnDefinition(c: DdlCursor): ColumnDefinition {
  const name = c.identifier('a column name');
  const type = parseDataType(c);
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
    if (c.atEnd() || c.isPunct(',') || c.isPunct(')')) break;
    if (POSITION_WORDS.has(c.peek().kind === 'word' ? c.peek().text.toLowerCase() : '')) break;
    if (c.acceptWord('not', 'null')) nullable = false;
    else if (c.acceptWord('null')) nullable = true;
    else if (c.acceptWord('default')) dflt = parseDefaultValue(c);
    else if (c.acceptWord('auto_increment')) autoIncrement = true;
    else if (c.acceptWord('unique')) {
      unique = true;
      c.acceptWord('key');
    } else if (c.acceptWord('primary', 'key') || c.acceptWord('key')) {
      primaryKey = true;
      nullable = nullable ?? false;
    } else if (c.acceptWord('comment')) comment = stringValue(c);
    else if (c.acceptWord('collate')) collation = nameValue(c);
    else if (c.acceptWord('character', 'set') || c.acceptWord('charset')) charset = nameValue(c);
    else if (c.acceptWord('generated', 'always', 'as') || c.acceptWord('as')) {
      const expression = c.balanced();
      let stored = false;
      if (c.acceptWord('stored') || c.acceptWord('persistent')) stored = true;
      else c.acceptWord('virtual');
      generated = { expression, stored };
    } else if (c.acceptWord('on', 'update')) {
      const s = c.peek().start;
      c.next();
      if (c.isPunct('(')) c.balanced();
      onUpdate = c.sql.slice(s, c.tokens[c.i - 1]!.end);
    } else if (c.acceptWord('invisible')) invisible = true;
    else if (c.acceptWord('visible')) invisible = false;
    else if (c.isWord('check') || (c.isWord('constraint') && (c.isWord('check', 1) || c.isWord('check', 2)))) {
      if (c.acceptWord('constraint') && !c.isWord('check')) c.identifier();
      c.expectWord('check');
      const expr = c.balanced();
      if (expr.replace(/[\s`]/g, '').toLowerCase() === `json_valid(${name.toLowerCase()})`) jsonCheck = true;
    } else if (c.acceptWord('references')) {
      c.tableName();
      if (c.isPunct('(')) c.balanced();
      // MATCH …, ON DELETE …, ON UPDATE … (reference options)
      while (c.isWord('match') || (c.isWord('on') && (c.isWord('delete', 1) || c.isWord('update', 1)))) {
        if (c.acceptWord('match')) c.next();
        else {
          c.next();
          c.next();
          if (c.acceptWord('set')) c.next();
          else if (c.acceptWord('no')) c.next();
          else c.next();
        }
      }
    } else if (c.acceptWord('with', 'system', 'versioning') || c.acceptWord('without', 'system', 'versioning')) {
      // MariaDB per-column versioning: no effect on the row images floe reads
    } else if (c.acceptWord('serial', 'default', 'value')) {
      autoIncrement = true;
      nullable = false;
      unique = true;
    } else {
      // COLUMN_FORMAT x, STORAGE x, SRID n, ENGINE_ATTRIBUTE = 'x', COMPRESSED[=zlib], REF_SYSTEM_ID = n …
      c.next();
      if (c.acceptPunct('=')) c.next();
      else if (c.isPunct('(')) c.balanced();
      else if (['column_format', 'storage', 'srid'].includes(c.tokens[c.i - 1]!.text.toLowerCase())) c.next();
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

function stringValue(c: DdlCursor): string {
  const t = c.next();
  if (t.kind !== 'string') {
    c.i--;
    throw c.error('expected a string literal');
  }
  return t.text;
}

/** A charset/collation name: word, quoted identifier, string, or the word BINARY. */
function nameValue(c: DdlCursor): string {
  c.acceptPunct('=');
  const t = c.next();
  if (t.kind === 'word' || t.kind === 'quoted-ident' || t.kind === 'string') return t.text.toLowerCase();
  c.i--;
  throw c.error('expected a character set or collation name');
}

function parseDataType(c: DdlCursor): DataTypeSpec {
  const first = c.identifier('a data type').toLowerCase();
  let name = first;
  // multi-word type names
  if (first === 'double' && c.acceptWord('precision')) name = 'double precision';
  else if ((first === 'char' || first === 'character') && c.acceptWord('varying')) name = 'varchar';
  else if (first === 'national') {
    const w = c.identifier('a data type').toLowerCase();
    name = c.acceptWord('varying') || w === 'varchar' ? 'nvarchar' : 'nchar';
  } else if (first === 'nchar' && c.acceptWord('varying')) name = 'nvarchar';
  else if (first === 'long') {
    if (c.acceptWord('varbinary')) name = 'long varbinary';
    else if (c.acceptWord('varchar') || c.acceptWord('char', 'varying')) name = 'long varchar';
    else name = 'long';
  }
  const args: string[] = [];
  if (c.isPunct('(')) {
    c.next();
    for (;;) {
      const t = c.next();
      if (t.kind === 'number' || t.kind === 'string') args.push(t.text);
      else if (t.kind === 'word') args.push(t.text); // e.g. FLOAT(53) never, but be tolerant
      else if (t.kind === 'hex') args.push(Buffer.from(t.bytes ?? []).toString('latin1'));
      else throw c.error('expected a type argument');
      if (c.acceptPunct(')')) break;
      c.expectPunct(',');
    }
  }
  let unsigned = false;
  let zerofill = false;
  let charset: string | undefined;
  let collation: string | undefined;
  let binaryCollation = false;
  for (;;) {
    if (c.acceptWord('unsigned')) unsigned = true;
    else if (c.acceptWord('signed')) unsigned = false;
    else if (c.acceptWord('zerofill')) {
      zerofill = true;
      unsigned = true; // ZEROFILL implies UNSIGNED
    } else if (c.acceptWord('character', 'set') || c.acceptWord('charset')) charset = nameValue(c);
    else if (c.acceptWord('collate')) collation = nameValue(c);
    else if (c.isWord('binary') && !c.isWord('default', 1) && ['char', 'varchar', 'character', 'text', 'tinytext', 'mediumtext', 'longtext', 'enum', 'set', 'nchar', 'nvarchar', 'long', 'long varchar'].includes(name)) {
      c.next();
      binaryCollation = true;
    } else if (c.acceptWord('ascii')) charset = 'latin1';
    else if (c.acceptWord('unicode')) charset = 'ucs2';
    else if (c.acceptWord('byte')) charset = 'binary';
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

export function parseDefaultValue(c: DdlCursor): DefaultSpec {
  const t = c.peek();
  if (c.acceptWord('null')) return { kind: 'null' };
  if (c.acceptWord('true')) return { kind: 'literal', value: '1', literalKind: 'boolean' };
  if (c.acceptWord('false')) return { kind: 'literal', value: '0', literalKind: 'boolean' };
  if (t.kind === 'punct' && (t.text === '-' || t.text === '+') && c.peek(1).kind === 'number') {
    c.next();
    const n = c.next().text;
    return { kind: 'literal', value: t.text === '-' ? negate(n) : n, literalKind: 'number' };
  }
  if (t.kind === 'number') {
    c.next();
    return { kind: 'literal', value: t.text, literalKind: 'number' };
  }
  if (t.kind === 'string') {
    c.next();
    return { kind: 'literal', value: t.text, literalKind: 'string' };
  }
  if (t.kind === 'hex') {
    c.next();
    return { kind: 'literal', value: t.bytes ?? new Uint8Array(), literalKind: 'hex' };
  }
  if (t.kind === 'bits') {
    c.next();
    return { kind: 'literal', value: t.text, literalKind: 'bits' };
  }
  if (t.kind === 'punct' && t.text === '(') {
    return { kind: 'expression', expression: `(${c.balanced()})` };
  }
  if (t.kind === 'word') {
    const w = t.text.toLowerCase();
    // typed literals: DATE '2020-01-01', TIME '…', TIMESTAMP '…'
    if ((w === 'date' || w === 'time' || w === 'timestamp') && c.peek(1).kind === 'string') {
      c.next();
      return { kind: 'literal', value: c.next().text, literalKind: 'string' };
    }
    if (NOW_WORDS.has(w) || c.isPunct('(', 1) || w === 'next' || w === 'previous') {
      const s = t.start;
      c.next();
      if (c.isPunct('(')) c.balanced();
      else if (w === 'next' || w === 'previous') {
        // NEXT VALUE FOR seq / PREVIOUS VALUE FOR seq (MariaDB sequences)
        c.acceptWord('value');
        c.acceptWord('for');
        c.tableName();
      }
      return { kind: 'expression', expression: c.sql.slice(s, c.tokens[c.i - 1]!.end) };
    }
  }
  throw c.error('expected a default value (literal, NULL or expression)');
}

function negate(number: string): string {
  return number.startsWith('-') ? number.slice(1) : '-' + number;
}
