import { describe, expect, it } from 'vitest';
import { parseDdl } from '../../../../src/source/mysql/ddl/ddl-parser.js';
import { tokenize } from '../../../../src/source/mysql/ddl/ddl-lexer.js';
import type { AlterAction, AlterTableStatement, ColumnDefinition } from '../../../../src/source/mysql/ddl/ddl-statements.js';

function alter(sql: string, db = 'shop'): AlterTableStatement {
  const s = parseDdl(sql, db);
  if (s.kind !== 'alter-table') throw new Error(`expected alter-table, got ${s.kind}`);
  return s;
}

function only<T extends AlterAction['kind']>(sql: string, kind: T): Extract<AlterAction, { kind: T }> {
  const s = alter(sql);
  expect(s.actions.map((a) => a.kind)).toEqual([kind]);
  return s.actions[0] as Extract<AlterAction, { kind: T }>;
}

function column(sql: string): ColumnDefinition {
  const a = only(sql, 'add-column');
  return a.column;
}

describe('lexer', () => {
  it('skips comments of every kind and lexes executable comments as code', () => {
    const t = tokenize("ALTER /* c */ TABLE t -- x\n # y\n ADD c INT /*!50100 COMMENT 'k' */ /*M!100100 NOT NULL */");
    expect(t.filter((x) => x.kind !== 'eof').map((x) => x.text)).toEqual(['ALTER', 'TABLE', 't', 'ADD', 'c', 'INT', 'COMMENT', 'k', 'NOT', 'NULL']);
  });
  it('keeps "--" without a following space as two minus signs', () => {
    expect(tokenize('1--2').map((t) => t.text)).toEqual(['1', '-', '-', '2', '']);
  });
  it('reads strings with doubling, escapes, introducers and concatenation', () => {
    const t = tokenize(`'it''s' "a\\"b" _utf8mb4'x\\ny' N'n' 'a' 'b' X'6162' 0x0A b'101' 0b11`);
    expect(t.map((x) => [x.kind, x.text, x.introducer])).toEqual([
      ['string', "it's", undefined],
      ['string', 'a"b', undefined],
      ['string', 'x\ny', 'utf8mb4'],
      ['string', 'nab', 'n'], // adjacent literals concatenate

      ['hex', '6162', undefined],
      ['hex', '0A', undefined],
      ['bits', '101', undefined],
      ['bits', '11', undefined],
      ['eof', '', undefined],
    ]);
    expect([...t[4].bytes!]).toEqual([0x61, 0x62]);
  });
  it('reads back-quoted identifiers with doubled quotes and identifiers starting with digits', () => {
    const t = tokenize('`we``ird`.`t 1` 1abc 1e3 1.5 .5');
    expect(t.map((x) => [x.kind, x.text])).toEqual([
      ['quoted-ident', 'we`ird'],
      ['punct', '.'],
      ['quoted-ident', 't 1'],
      ['word', '1abc'],
      ['number', '1e3'],
      ['number', '1.5'],
      ['number', '.5'],
      ['eof', ''],
    ]);
  });
  it('rejects unterminated literals with the offset', () => {
    expect(() => tokenize("ALTER TABLE t COMMENT 'x")).toThrow(/unterminated string literal at offset 22/);
    expect(() => tokenize('ALTER TABLE `t')).toThrow(/unterminated ` identifier/);
  });
});

describe('ALTER TABLE … ADD COLUMN', () => {
  it('parses types, nullability, literal defaults and comments', () => {
    const c = column("ALTER TABLE orders ADD COLUMN note VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT 'n/a' COMMENT 'free text'");
    expect(c).toMatchObject({
      name: 'note',
      type: { name: 'varchar', args: ['20'], charset: 'utf8mb4', collation: 'utf8mb4_bin', unsigned: false },
      nullable: false,
      default: { kind: 'literal', value: 'n/a', literalKind: 'string' },
      comment: 'free text',
    });
  });
  it('qualifies names with the default database or the written one', () => {
    expect(alter('ALTER TABLE orders ADD c INT').table).toEqual({ database: 'shop', table: 'orders' });
    expect(alter('ALTER TABLE `other db`.`my table` ADD c INT').table).toEqual({ database: 'other db', table: 'my table' });
    expect(alter('alter table other.t add c int', '').table).toEqual({ database: 'other', table: 't' });
  });
  it('reads numeric, negative, boolean, bit, hex and NULL defaults', () => {
    expect(column('ALTER TABLE t ADD c INT DEFAULT -5').default).toEqual({ kind: 'literal', value: '-5', literalKind: 'number' });
    expect(column('ALTER TABLE t ADD c DECIMAL(10,2) DEFAULT +1.50').default).toEqual({ kind: 'literal', value: '1.50', literalKind: 'number' });
    expect(column('ALTER TABLE t ADD c BOOL DEFAULT TRUE').default).toEqual({ kind: 'literal', value: '1', literalKind: 'boolean' });
    expect(column("ALTER TABLE t ADD c BIT(3) DEFAULT b'101'").default).toEqual({ kind: 'literal', value: '101', literalKind: 'bits' });
    expect(column("ALTER TABLE t ADD c VARBINARY(4) DEFAULT X'0102'").default).toMatchObject({ kind: 'literal', literalKind: 'hex' });
    expect(column('ALTER TABLE t ADD c INT NULL DEFAULT NULL')).toMatchObject({ nullable: true, default: { kind: 'null' } });
    expect(column("ALTER TABLE t ADD c DATE DEFAULT DATE '2020-01-02'").default).toEqual({ kind: 'literal', value: '2020-01-02', literalKind: 'string' });
  });
  it('keeps expression defaults as text', () => {
    expect(column('ALTER TABLE t ADD c DATETIME(6) DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)')).toMatchObject({
      default: { kind: 'expression', expression: 'CURRENT_TIMESTAMP(6)' },
      onUpdate: 'CURRENT_TIMESTAMP(6)',
    });
    expect(column('ALTER TABLE t ADD c TIMESTAMP DEFAULT now()').default).toEqual({ kind: 'expression', expression: 'now()' });
    expect(column('ALTER TABLE t ADD c CHAR(36) DEFAULT (uuid())').default).toEqual({ kind: 'expression', expression: '(uuid())' });
    expect(column('ALTER TABLE t ADD c INT DEFAULT (1 + 2)').default).toEqual({ kind: 'expression', expression: '(1 + 2)' });
    expect(column('ALTER TABLE t ADD c UUID DEFAULT uuid()').default).toEqual({ kind: 'expression', expression: 'uuid()' });
    expect(column('ALTER TABLE t ADD c BIGINT DEFAULT NEXT VALUE FOR s1').default).toEqual({ kind: 'expression', expression: 'NEXT VALUE FOR s1' });
  });
  it('reads FIRST / AFTER and several columns', () => {
    const s = alter('ALTER TABLE t ADD COLUMN a INT FIRST, ADD b TEXT AFTER `id`, ADD COLUMN c INT UNSIGNED ZEROFILL');
    expect(s.actions).toMatchObject([
      { kind: 'add-column', column: { name: 'a' }, position: { kind: 'first' } },
      { kind: 'add-column', column: { name: 'b' }, position: { kind: 'after', column: 'id' } },
      { kind: 'add-column', column: { name: 'c', type: { unsigned: true, zerofill: true } } },
    ]);
    const p = alter('ALTER TABLE t ADD COLUMN (x INT NOT NULL, y VARCHAR(5) DEFAULT "q", INDEX ix (x))');
    expect(p.actions.map((a) => a.kind)).toEqual(['add-column', 'add-column', 'no-schema-effect']);
    expect(p.actions[1]).toMatchObject({ column: { name: 'y', default: { kind: 'literal', value: 'q' } } });
  });
  it('accepts MariaDB IF NOT EXISTS, PERSISTENT generated columns and the JSON check', () => {
    expect(only('ALTER TABLE t ADD COLUMN IF NOT EXISTS c INT', 'add-column').ifNotExists).toBe(true);
    expect(column('ALTER TABLE t ADD g INT AS (a + 1) PERSISTENT').generated).toEqual({ expression: 'a + 1', stored: true });
    expect(column('ALTER TABLE t ADD g INT GENERATED ALWAYS AS (a * 2) VIRTUAL').generated).toEqual({ expression: 'a * 2', stored: false });
    expect(column('ALTER TABLE t ADD j LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin CHECK (json_valid(`j`))').jsonCheck).toBe(true);
    expect(column('ALTER TABLE t ADD j JSON').jsonCheck).toBe(true);
  });
  it('reads multi-word and aliased types and their attributes', () => {
    expect(column('ALTER TABLE t ADD c DOUBLE PRECISION').type.name).toBe('double precision');
    expect(column('ALTER TABLE t ADD c NATIONAL VARCHAR(10)').type.name).toBe('nvarchar');
    expect(column('ALTER TABLE t ADD c CHARACTER VARYING(10)').type).toMatchObject({ name: 'varchar', args: ['10'] });
    expect(column('ALTER TABLE t ADD c LONG VARBINARY').type.name).toBe('long varbinary');
    expect(column("ALTER TABLE t ADD c ENUM('a','b''c','d,e') NOT NULL").type.args).toEqual(['a', "b'c", 'd,e']);
    expect(column('ALTER TABLE t ADD c VARCHAR(10) BINARY').type.binaryCollation).toBe(true);
    expect(column('ALTER TABLE t ADD c INT KEY').primaryKey).toBe(true);
    expect(column('ALTER TABLE t ADD c INT INVISIBLE').invisible).toBe(true);
  });
  it('classifies index, constraint and table-option actions as no schema effect', () => {
    const s = alter('ALTER TABLE t ADD INDEX ix (a), ADD UNIQUE KEY uk (b(10)), ADD CONSTRAINT fk FOREIGN KEY (p) REFERENCES p (id) ON DELETE CASCADE, ENGINE=InnoDB, ALGORITHM=INPLACE, LOCK=NONE, DROP INDEX ix2, RENAME INDEX a TO b, ALTER INDEX i INVISIBLE, FORCE');
    expect(s.actions.map((a) => a.kind)).toEqual(Array(10).fill('no-schema-effect'));
    expect(alter('ALTER TABLE t ENGINE=InnoDB ROW_FORMAT=DYNAMIC COMMENT=\'x\'').actions.map((a) => a.kind)).toEqual(['no-schema-effect']);
    expect(alter('ALTER TABLE t ADD c INT, ALGORITHM=INSTANT').actions.map((a) => a.kind)).toEqual(['add-column', 'no-schema-effect']);
    expect(alter('ALTER TABLE t PARTITION BY HASH(id) PARTITIONS 4').actions.map((a) => a.kind)).toEqual(['no-schema-effect']);
  });
  it('flags statements that change rows without row events as unsupported', () => {
    expect(only('ALTER TABLE t CONVERT TO CHARACTER SET latin1', 'unsupported').reason).toMatch(/CONVERT TO CHARACTER SET/);
    expect(only('ALTER TABLE t DROP PARTITION p0', 'unsupported').reason).toMatch(/DROP PARTITION/);
    expect(only('ALTER TABLE t TRUNCATE PARTITION p0', 'unsupported').reason).toMatch(/TRUNCATE PARTITION/);
    expect(only('ALTER TABLE t ADD SYSTEM VERSIONING', 'unsupported').reason).toMatch(/system versioning/);
  });
});

describe('ALTER TABLE … DROP / RENAME / CHANGE / MODIFY / ALTER COLUMN', () => {
  it('drops columns with and without COLUMN and IF EXISTS', () => {
    expect(alter('ALTER TABLE t DROP COLUMN a, DROP b, DROP COLUMN IF EXISTS `c`').actions).toEqual([
      { kind: 'drop-column', name: 'a', ifExists: false },
      { kind: 'drop-column', name: 'b', ifExists: false },
      { kind: 'drop-column', name: 'c', ifExists: true },
    ]);
    expect(only('ALTER TABLE t DROP PRIMARY KEY', 'drop-primary-key')).toEqual({ kind: 'drop-primary-key' });
    expect(alter('ALTER TABLE t DROP FOREIGN KEY fk, DROP KEY k, DROP CHECK c').actions.map((a) => a.kind)).toEqual(['no-schema-effect', 'no-schema-effect', 'no-schema-effect']);
  });
  it('renames columns and tables', () => {
    expect(only('ALTER TABLE t RENAME COLUMN a TO b', 'rename-column')).toEqual({ kind: 'rename-column', from: 'a', to: 'b', ifExists: false });
    expect(only('ALTER TABLE t RENAME TO archive.t2', 'rename-table').to).toEqual({ database: 'archive', table: 't2' });
    expect(only('ALTER TABLE t RENAME AS t3', 'rename-table').to).toEqual({ database: 'shop', table: 't3' });
    expect(only('ALTER TABLE t RENAME t4', 'rename-table').to).toEqual({ database: 'shop', table: 't4' });
  });
  it('reads CHANGE and MODIFY with new definitions and positions', () => {
    expect(only('ALTER TABLE t CHANGE COLUMN a b BIGINT NOT NULL AFTER c', 'change-column')).toMatchObject({
      from: 'a',
      column: { name: 'b', type: { name: 'bigint' }, nullable: false },
      position: { kind: 'after', column: 'c' },
    });
    expect(only('ALTER TABLE t CHANGE a a INT', 'change-column')).toMatchObject({ from: 'a', column: { name: 'a' } });
    expect(only('ALTER TABLE t MODIFY COLUMN IF EXISTS a DECIMAL(12,2) FIRST', 'modify-column')).toMatchObject({ ifExists: true, column: { name: 'a', type: { args: ['12', '2'] } }, position: { kind: 'first' } });
    expect(only('ALTER TABLE t MODIFY a VARCHAR(100) NULL', 'modify-column').column.nullable).toBe(true);
  });
  it('sets and drops column defaults', () => {
    expect(only("ALTER TABLE t ALTER COLUMN a SET DEFAULT 'x'", 'alter-column-default')).toEqual({ kind: 'alter-column-default', name: 'a', default: { kind: 'literal', value: 'x', literalKind: 'string' } });
    expect(only('ALTER TABLE t ALTER a DROP DEFAULT', 'alter-column-default')).toEqual({ kind: 'alter-column-default', name: 'a' });
  });
  it('reads ADD PRIMARY KEY with constraint names and key parts', () => {
    expect(only('ALTER TABLE t ADD CONSTRAINT pk PRIMARY KEY (a, b(10) DESC)', 'add-primary-key').columns).toEqual(['a', 'b']);
    expect(alter('ALTER TABLE t ADD PRIMARY KEY (id) USING BTREE').actions[0]).toEqual({ kind: 'add-primary-key', columns: ['id'] });
  });
  it('accepts ONLINE / IGNORE / IF EXISTS (MariaDB) and a trailing semicolon', () => {
    const s = alter('ALTER ONLINE IGNORE TABLE IF EXISTS t ADD c INT;');
    expect(s.ifExists).toBe(true);
    expect(s.actions.map((a) => a.kind)).toEqual(['add-column']);
  });
  it('names what it expected when a statement is malformed', () => {
    expect(() => parseDdl('ALTER TABLE t RENAME COLUMN a b', 'd')).toThrow(/expected TO at offset 30/);
    expect(() => parseDdl('ALTER TABLE t ALTER COLUMN a SET x', 'd')).toThrow(/expected SET DEFAULT, DROP DEFAULT/);
  });
});

describe('other statements', () => {
  it('parses CREATE TABLE with columns, table-level keys and options', () => {
    const s = parseDdl(
      "CREATE TABLE IF NOT EXISTS `shop`.`items` (\n  `id` bigint(20) unsigned NOT NULL AUTO_INCREMENT,\n  `order_id` int NOT NULL,\n  `sku` varchar(32) NOT NULL DEFAULT '',\n  PRIMARY KEY (`id`),\n  KEY `ix` (`order_id`),\n  CONSTRAINT `fk` FOREIGN KEY (`order_id`) REFERENCES `orders` (`id`) ON DELETE CASCADE\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 /*!50100 PARTITION BY HASH (id) */",
      'x',
    );
    expect(s).toMatchObject({ kind: 'create-table', table: { database: 'shop', table: 'items' }, ifNotExists: true, primaryKey: ['id'], asSelect: false });
    if (s.kind !== 'create-table') throw new Error();
    expect(s.columns.map((c) => c.name)).toEqual(['id', 'order_id', 'sku']);
    expect(s.columns[0]).toMatchObject({ autoIncrement: true, type: { name: 'bigint', args: ['20'], unsigned: true } });
  });
  it('parses CREATE TABLE variants: LIKE, AS SELECT, OR REPLACE, TEMPORARY, column-level key', () => {
    expect(parseDdl('CREATE TABLE t2 LIKE t1', 'd')).toMatchObject({ kind: 'create-table', like: { database: 'd', table: 't1' } });
    expect(parseDdl('CREATE TABLE t2 (LIKE t1)', 'd')).toMatchObject({ kind: 'create-table', like: { database: 'd', table: 't1' } });
    expect(parseDdl('CREATE TABLE t2 (id INT PRIMARY KEY) AS SELECT id FROM t1', 'd')).toMatchObject({ kind: 'create-table', asSelect: true, primaryKey: ['id'] });
    expect(parseDdl('CREATE TABLE t2 SELECT * FROM t1', 'd')).toMatchObject({ kind: 'create-table', asSelect: true });
    expect(parseDdl('CREATE OR REPLACE TABLE t (a INT)', 'd')).toMatchObject({ kind: 'create-table', orReplace: true });
    expect(parseDdl('CREATE TEMPORARY TABLE t (a INT)', 'd')).toMatchObject({ kind: 'create-table', temporary: true });
  });
  it('parses DROP TABLE lists (MariaDB logs a "generated by server" comment) and DROP DATABASE', () => {
    expect(parseDdl('DROP TABLE IF EXISTS `t1`,`x`.`t2` /* generated by server */', 'd')).toEqual({
      kind: 'drop-table',
      tables: [
        { database: 'd', table: 't1' },
        { database: 'x', table: 't2' },
      ],
      ifExists: true,
      temporary: false,
    });
    expect(parseDdl('DROP TEMPORARY TABLE t', 'd')).toMatchObject({ temporary: true });
    expect(parseDdl('DROP DATABASE IF EXISTS `shop`', 'd')).toEqual({ kind: 'drop-database', database: 'shop' });
  });
  it('parses RENAME TABLE and TRUNCATE', () => {
    expect(parseDdl('RENAME TABLE a TO b, x.c TO y.d', 'd')).toEqual({
      kind: 'rename-table',
      renames: [
        { from: { database: 'd', table: 'a' }, to: { database: 'd', table: 'b' } },
        { from: { database: 'x', table: 'c' }, to: { database: 'y', table: 'd' } },
      ],
    });
    expect(parseDdl('TRUNCATE TABLE `t`', 'd')).toEqual({ kind: 'truncate-table', table: { database: 'd', table: 't' } });
    expect(parseDdl('truncate t', 'd')).toEqual({ kind: 'truncate-table', table: { database: 'd', table: 't' } });
  });
  it('parses CREATE/DROP INDEX as index statements and the rest as other', () => {
    expect(parseDdl('CREATE UNIQUE INDEX ix ON t (a)', 'd')).toMatchObject({ kind: 'index', table: { database: 'd', table: 't' } });
    expect(parseDdl('DROP INDEX ix ON x.t', 'd')).toMatchObject({ kind: 'index', table: { database: 'x', table: 't' } });
    expect(parseDdl('CREATE VIEW v AS SELECT * FROM shop.t', 'd')).toEqual({ kind: 'other', verb: 'create', tables: [{ database: 'shop', table: 't' }] });
    expect(parseDdl("GRANT SELECT ON shop.* TO 'u'@'%'", 'd')).toMatchObject({ kind: 'other', verb: 'grant' });
    expect(parseDdl('ALTER DATABASE shop CHARACTER SET utf8mb4', 'd')).toMatchObject({ kind: 'other', verb: 'alter' });
  });
});
