import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseConfigText, redactConfig } from '../../src/config/load.js';
import { configJsonSchema } from '../../src/config/json-schema.js';

describe('config', () => {
  it('fills defaults for an empty document (quickstart)', () => {
    const c = parseConfigText('');
    expect(c.warehouse.location).toBe('./warehouse');
    expect(c.catalog).toEqual({ type: 'filesystem', name: 'floe' });
    expect(c.iceberg.formatVersion).toBe(3);
    expect(c.schemaChanges).toBe('evolve');
    expect(c.source).toBeUndefined();
  });

  it('substitutes ${ENV} and ${ENV:-default} and names a missing variable', () => {
    const text = 'source:\n  url: mysql://floe:${PW}@db:3306\n  user: ${WHO:-floe}\n';
    const c = parseConfigText(text, { PW: 's3cret' });
    expect(c.source!.url).toBe('mysql://floe:s3cret@db:3306');
    expect(c.source!.user).toBe('floe');
    expect(() => parseConfigText(text, {})).toThrow(/source\.url: environment variable PW is not set/);
  });

  it('reports the offending path for invalid values', () => {
    expect(() => parseConfigText('iceberg:\n  formatVersion: 4\n')).toThrow(/iceberg\.formatVersion/);
    expect(() => parseConfigText('source:\n  snapshot:\n    mode: sometimes\n')).toThrow(/source\.snapshot\.mode/);
    expect(() => parseConfigText('catalog:\n  type: sql\n')).toThrow(/catalog\.url/);
    expect(() => parseConfigText('sauce: {}\n')).toThrow(/sauce|Unrecognized/);
  });

  it('an orphan window below one minute needs maintenance.removeOrphans.allowShortWindow; a table may override the format version', () => {
    expect(() => parseConfigText('maintenance:\n  removeOrphans:\n    olderThanMs: 2000\n')).toThrow(/allowShortWindow/);
    const c = parseConfigText('maintenance:\n  removeOrphans:\n    olderThanMs: 2000\n    intervalMs: 1000\n    allowShortWindow: true\n');
    expect(c.maintenance.removeOrphans).toEqual({ olderThanMs: 2000, intervalMs: 1000, allowShortWindow: true });
    expect(parseConfigText('').maintenance.removeOrphans).toEqual({ olderThanMs: 3 * 86_400_000, intervalMs: 86_400_000, allowShortWindow: false });
    expect(() => parseConfigText('maintenance:\n  removeOrphans:\n    olderThanMs: 999\n    allowShortWindow: true\n')).toThrow(/olderThanMs/);
    expect(parseConfigText('tables:\n  overrides:\n    db.t:\n      formatVersion: 2\n').tables.overrides['db.t'].formatVersion).toBe(2);
  });

  it('source.heartbeatMs: 2000 ms by default, 100 ms to 10 minutes, a whole number', () => {
    expect(parseConfigText('source:\n  host: db\n').source!.heartbeatMs).toBe(2000);
    expect(parseConfigText('source:\n  heartbeatMs: 300\n').source!.heartbeatMs).toBe(300);
    expect(() => parseConfigText('source:\n  heartbeatMs: 50\n')).toThrow(/source\.heartbeatMs/);
    expect(() => parseConfigText('source:\n  heartbeatMs: 600001\n')).toThrow(/source\.heartbeatMs/);
    expect(() => parseConfigText('source:\n  heartbeatMs: 250.5\n')).toThrow(/source\.heartbeatMs/);
  });

  it('redacts secrets', () => {
    const c = parseConfigText('source:\n  url: mysql://floe:pw@db:3306\n  password: hunter2\n');
    const r = JSON.stringify(redactConfig(c));
    expect(r).not.toContain('hunter2');
    expect(r).not.toContain(':pw@');
  });

  it('the committed JSON Schema is up to date (npm run gen:config-schema)', () => {
    const committed = JSON.parse(readFileSync(new URL('../../schemas/floe-config.schema.json', import.meta.url), 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(configJsonSchema())));
  });
});

describe('README', () => {
  it('its real-world configuration example is a valid config', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const block = /```yaml\n(# floe\.yaml[\s\S]*?)```/.exec(readme);
    expect(block, 'the README has a floe.yaml example').not.toBeNull();
    const env = { MYSQL_FLOE_PASSWORD: 'x', MINIO_ACCESS_KEY: 'a', MINIO_SECRET_KEY: 'b', CATALOG_DB_PASSWORD: 'c', PII_SALT: 'd' };
    const c = parseConfigText(block![1], env);
    expect(c.catalog.type).toBe('sql');
    expect(c.tables.overrides['shop.orders'].partitionBy).toEqual(['day(created_at)']);
    expect(c.transforms).toHaveLength(3);
  });
});
