/**
 * The zongji internals floe patches or relies on (zongji-raw-events.ts, binlog-session.ts), checked
 * against the installed zongji so that an upgrade that moves them fails here, by name, rather than
 * as lost rows in a run: the per-instance `_fetchTableInfo` (padding a drifted information_schema
 * description), the binlog command class made per start and announced by 'ready' (reading
 * PARTIAL_UPDATE_ROWS_EVENT as UPDATE_ROWS_EVENT in `binlogData`), the event class codes involved,
 * and the connection pause zongji takes while it fetches a TABLE_MAP's columns.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import ZongJi from '@vlasky/zongji';

const ROOT = dirname(createRequire(import.meta.url).resolve('@vlasky/zongji'));
const lib = async <T>(file: string): Promise<T> => (await import(pathToFileURL(join(ROOT, 'lib', file)).href)) as T;

describe('the zongji internals floe depends on', () => {
  it('is the zongji version these checks were written against', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(pkg.version).toBe('0.9.0');
  });

  it('fetches a TABLE_MAP’s columns through an instance-overridable _fetchTableInfo(event, next), pausing the binlog connection meanwhile', async () => {
    expect(typeof (ZongJi.prototype as unknown as { _fetchTableInfo: unknown })._fetchTableInfo).toBe('function');
    const source = await readFile(join(ROOT, 'index.js'), 'utf8');
    expect(source).toContain('this._fetchTableInfo(event, () => {');
    expect(source).toMatch(/this\.connection\.pause\(\);\s+attachGtid\(event\);\s+this\._fetchTableInfo/);
    expect(source).toMatch(/if \(this\.connection\) this\.connection\.resume\(\);/);
  });

  it("makes its binlog command class per start and emits 'ready' before queuing it", async () => {
    const source = await readFile(join(ROOT, 'index.js'), 'utf8');
    expect(source).toMatch(/this\.BinlogClass = initBinlogClass\(this\);\s+this\.ready = true;\s+this\.emit\('ready'\);[\s\S]*?addCommand\(new this\.BinlogClass\(binlogHandler\)\)/);
    const { default: initBinlogClass } = await lib<{ default: (zongji: unknown) => { prototype: { binlogData: unknown } } }>('sequence/binlog.js');
    const Binlog = initBinlogClass({ useChecksum: true });
    expect(typeof Binlog.prototype.binlogData).toBe('function');
    // each packet goes through the prototype's binlogData, looked up per packet
    expect(await readFile(join(ROOT, 'lib', 'sequence', 'binlog.js'), 'utf8')).toContain('return Binlog.prototype.binlogData;');
  });

  it('maps type 39 to its undecodable PartialUpdateRows and 31 to UpdateRows, which shares its layout up to the row images', async () => {
    const { getEventClass } = await lib<{ getEventClass: (code: number) => { name: string } }>('code_map.js');
    expect(getEventClass(39).name).toBe('PartialUpdateRows');
    expect(getEventClass(31).name).toBe('UpdateRows');
    const rows = await readFile(join(ROOT, 'lib', 'rows_event.js'), 'utf8');
    expect(rows).toMatch(/0x1f, \/\/ UPDATE_ROWS_EVENT_V2/);
  });
});
