/**
 * Which DDL statements bring a new table into capture (the runner snapshots it in process), and the
 * conservative "does this statement name a captured table" check used when a statement cannot be
 * parsed.
 */
import { describe, expect, it } from 'vitest';
import { tableMatcher } from '../../src/source/mysql/schema/discovery.js';
import type { DdlEvent } from '../../src/source/mysql/events.js';
import { capturedTablesIn, ddlPositionText, newTablesIn } from '../../src/pipeline/ddl-handler.js';

function ddl(statement: string, database = 'shop'): DdlEvent {
  return {
    kind: 'ddl',
    database,
    statement,
    gtid: '0-1-42',
    position: { file: 'binlog.000003', commitPosition: 1234, eventIndex: 0, gtid: '0-1-42' },
    offset: { file: 'binlog.000003', position: 1234 },
    timestampMs: 0,
  };
}

const matches = tableMatcher({ include: ['shop.*'], exclude: ['shop.tmp_*'] });
const captured = new Set(['shop.orders']);
const keys = (e: DdlEvent) => newTablesIn(e, captured, matches).map((t) => `${t.database}.${t.table}`);

describe('DDL that brings new tables', () => {
  it('a CREATE TABLE (also LIKE / AS SELECT) of a matching, uncaptured table', () => {
    expect(keys(ddl('CREATE TABLE items (id INT PRIMARY KEY)'))).toEqual(['shop.items']);
    expect(keys(ddl('CREATE TABLE IF NOT EXISTS `shop`.`items2` LIKE orders', 'other'))).toEqual(['shop.items2']);
    expect(keys(ddl('CREATE TABLE copy AS SELECT * FROM orders'))).toEqual(['shop.copy']);
  });

  it('not: temporary, excluded, other databases, already captured, unparsable', () => {
    expect(keys(ddl('CREATE TEMPORARY TABLE items (id INT)'))).toEqual([]);
    expect(keys(ddl('CREATE TABLE tmp_x (id INT)'))).toEqual([]);
    expect(keys(ddl('CREATE TABLE items (id INT)', 'crm'))).toEqual([]);
    expect(keys(ddl('CREATE OR REPLACE TABLE orders (id INT)'))).toEqual([]);
    expect(keys(ddl('THIS IS NOT SQL'))).toEqual([]);
  });

  it('a RENAME of an uncaptured table into a matching name; a rename of a captured one is the policy’s', () => {
    expect(keys(ddl('RENAME TABLE tmp_new TO items'))).toEqual(['shop.items']);
    expect(keys(ddl('RENAME TABLE orders TO orders_old'))).toEqual([]);
  });
});

describe('capturedTablesIn', () => {
  it('finds captured tables by qualified or default-database names, errs towards "concerned"', () => {
    const set = new Set(['shop.orders', 'shop.items']);
    expect(capturedTablesIn('ALTER TABLE `orders` ADD COLUMN x INT', 'shop', set)).toEqual(['shop.orders']);
    expect(capturedTablesIn('alter table shop . items drop column y', 'other', set)).toEqual(['shop.items']);
    expect(capturedTablesIn('ALTER TABLE customers ADD COLUMN orders INT /* items */', 'shop', set)).toEqual(['shop.orders']);
    expect(capturedTablesIn('CREATE USER x', 'shop', set)).toEqual([]);
  });

  it('positions read as gtid and file:position', () => {
    expect(ddlPositionText(ddl('X'))).toBe('gtid 0-1-42, binlog.000003:1234');
  });
});
