/**
 * Decoder micro-benchmark: row changes/s of floe's row decoder (src/source/mysql/binlog/) against
 * zongji's decoding of the very same rows events, in this process, with no network in either: the
 * workload's binlog range is read once through a zongji session (floe's session, connection options
 * and table-map adaptation) with the events' bytes captured (bench/zongji-capture.ts), then both
 * decoders run over the captured events, alternately, several passes each:
 * - zongji: its WriteRows/UpdateRows/DeleteRows classes built on the bytes, as its stream builds
 *   them (zongji's values, not yet floe's);
 * - zongji + binlog-values: the same, each image then converted by createBinlogRowConverter — what
 *   floe's streaming path does today;
 * - floe: decodeRowsEvent straight into value-model rows (TABLE_MAP compiled once).
 * The first pass checks that floe's rows equal the converted zongji rows. Rates are changes per CPU
 * second of this process (the median of 5 alternating rounds), so that other load on a shared
 * machine does not tilt the ratio.
 *
 * `npm run bench` runs it after ceiling B; `node --import tsx bench/row-decoder.ts [--rows N]
 * [--changes M]` runs it alone against a private MariaDB (default 100,000 rows, 200,000 changes).
 */
import { BINLOG_CONNECTION_OPTIONS, createBinlogRowConverter } from '../src/source/mysql/binlog/zongji/binlog-values.js';
import { BinlogSession } from '../src/source/mysql/binlog/zongji/binlog-session.js';
import { connectMysql, driverOptions, type MysqlConnectionConfig } from '../src/source/mysql/client.js';
import { detectDialect } from '../src/source/mysql/dialect.js';
import { compareBinlogFiles, type BinlogOffset } from '../src/source/mysql/offset/offset.js';
import { captureTableSchemas } from '../src/source/mysql/schema/table-schema.js';
import { mapTable, type MappedTable } from '../src/source/mysql/schema/type-mapping.js';
import { compileTable, decodeRowsEvent, eventTableId, type CompiledTable } from '../src/source/mysql/binlog/rows/row-decoder.js';
import { parseTableMap } from '../src/source/mysql/binlog/rows/table-map.js';
import type { Row as ValueRow } from '../src/model/values.js';
import { installRawCapture, zongjiReplay, type WithRaw } from './zongji-capture.js';
import { TABLE } from './dataset.js';

export interface DecoderFigures {
  rowsEvents: number;
  /** Row changes in the captured events (an update's before/after pair is one). */
  changes: number;
  passes: number;
  zongjiPerSecond: number;
  zongjiConvertedPerSecond: number;
  floePerSecond: number;
  /** floe / zongji alone (the target: ≥ 3). */
  ratio: number;
  /** floe / zongji + binlog-values (what floe's streaming path decodes with today). */
  ratioToConverted: number;
}

interface Captured {
  events: Buffer[];
  tableMaps: Map<number, Buffer>;
  tableMapState: Record<string, unknown>;
  useChecksum: boolean;
}

/** Reads `from` → `to` through a zongji session, keeping the bytes of the table's rows events. */
async function capture(connection: MysqlConnectionConfig, database: string, from: BinlogOffset, to: BinlogOffset): Promise<Captured> {
  await installRawCapture();
  const out: Captured = { events: [], tableMaps: new Map(), tableMapState: {}, useChecksum: false };
  let file = from.file!;
  const probe = await connectMysql(connection);
  const options = { ...(await driverOptions(connection, probe.encrypted ? 'tls' : 'plain')), ...BINLOG_CONNECTION_OPTIONS };
  await probe.close();
  await new Promise<void>((resolve, reject) => {
    let session: BinlogSession | undefined;
    const finish = (e?: unknown) => {
      const s = session;
      session = undefined;
      void s?.stop().then(() => (e ? reject(e) : resolve()));
    };
    session = new BinlogSession({
      connection: options,
      serverId: 4_000_002,
      start: { file: from.file, position: from.position },
      includeSchema: { [database]: true },
      heartbeatMs: 2000,
      onEvent: (e) => {
        const ev = e as unknown as WithRaw & { getEventName(): string; tableId?: number; tableMap?: Record<string, unknown>; useChecksum?: boolean; binlogName?: string; nextPosition: number };
        const name = ev.getEventName();
        if (name === 'rotate') file = ev.binlogName!;
        if (name === 'tablemap' && ev.floeRaw && ev.tableId !== undefined) {
          out.tableMaps.set(ev.tableId, ev.floeRaw);
          out.tableMapState = ev.tableMap!;
        }
        if ((name === 'writerows' || name === 'updaterows' || name === 'deleterows') && ev.floeRaw) {
          out.events.push(ev.floeRaw);
          out.useChecksum = ev.useChecksum === true;
        }
        const c = compareBinlogFiles(file, to.file!);
        if (session && ev.nextPosition > 0 && name !== 'rotate' && c !== undefined && (c > 0 || (c === 0 && ev.nextPosition >= to.position!))) finish();
      },
      onError: (e) => finish(e),
    });
    session.start();
  });
  return out;
}

/**
 * Changes per CPU second of `run` (repeated for at least `minMs` of this process's CPU time): on a
 * shared machine the process's own CPU time, not the wall clock, is what both decoders are charged.
 */
function passRate(changes: number, run: () => void, minMs: number): { perSecond: number; passes: number } {
  let passes = 0;
  const started = process.cpuUsage();
  let elapsed = 0;
  do {
    run();
    passes++;
    const d = process.cpuUsage(started);
    elapsed = (d.user + d.system) / 1000;
  } while (elapsed < minMs);
  return { perSecond: (changes * passes) / (elapsed / 1000), passes };
}

export async function decoderBench(connection: MysqlConnectionConfig, database: string, from: BinlogOffset, to: BinlogOffset, options: { minMsPerRun?: number } = {}): Promise<DecoderFigures> {
  const captured = await capture(connection, database, from, to);
  const client = await connectMysql(connection);
  let mapped: MappedTable;
  try {
    const schemas = await captureTableSchemas(client, [{ database, table: TABLE }], (await detectDialect(client)).flavor);
    mapped = mapTable([...schemas.values()][0]);
  } finally {
    await client.close();
  }
  const checksum = captured.useChecksum ? 4 : 0;
  const compiled = new Map<number, CompiledTable>();
  for (const [id, raw] of captured.tableMaps) compiled.set(id, compileTable(parseTableMap(raw, checksum), mapped));
  const replay = await zongjiReplay(captured.tableMapState, captured.useChecksum, { ...BINLOG_CONNECTION_OPTIONS });
  const convert = createBinlogRowConverter(mapped);
  const events = captured.events;
  const tables = events.map((e) => compiled.get(eventTableId(e))!);

  // count and cross-check once
  let changes = 0;
  for (let i = 0; i < events.length; i++) {
    const zongjiRows = replay.decode(events[i]) as (Record<string, unknown> | { before: Record<string, unknown>; after: Record<string, unknown> })[];
    changes += zongjiRows.length;
    const update = isUpdate(events[i][4]);
    const expected: ValueRow[] = zongjiRows.flatMap((r) => (update ? [convert(r.before as never), convert(r.after as never)] : [convert(r as never)]));
    const ours = decodeRowsEvent(events[i], tables[i], checksum).rows;
    if (JSON.stringify(ours, replacer) !== JSON.stringify(expected, replacer)) throw new Error(`bench: floe's decoder and zongji + binlog-values differ on rows event ${i} of ${events.length}`);
  }
  const minMs = options.minMsPerRun ?? 2500;
  let sink = 0;
  const zongjiOnly = () => {
    for (let i = 0; i < events.length; i++) sink += replay.decode(events[i]).length;
  };
  const zongjiConverted = () => {
    for (let i = 0; i < events.length; i++) {
      const rows = replay.decode(events[i]) as Record<string, unknown>[];
      const update = isUpdate(events[i][4]);
      for (const r of rows) {
        if (update) {
          const u = r as unknown as { before: Record<string, unknown>; after: Record<string, unknown> };
          sink += convert(u.before).length + convert(u.after).length;
        } else sink += convert(r).length;
      }
    }
  };
  const floe = () => {
    for (let i = 0; i < events.length; i++) sink += decodeRowsEvent(events[i], tables[i], checksum).rows.length;
  };
  // warm-up, then alternate so that both see the same machine state
  for (const f of [zongjiOnly, zongjiConverted, floe]) f();
  const results = { zongji: [] as number[], converted: [] as number[], floe: [] as number[] };
  let passes = 0;
  for (let round = 0; round < 5; round++) {
    const a = passRate(changes, zongjiOnly, minMs / 5);
    const b = passRate(changes, zongjiConverted, minMs / 5);
    const c = passRate(changes, floe, minMs / 5);
    results.zongji.push(a.perSecond);
    results.converted.push(b.perSecond);
    results.floe.push(c.perSecond);
    passes += a.passes + b.passes + c.passes;
  }
  if (sink < 0) throw new Error('unreachable');
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const zongjiPerSecond = median(results.zongji);
  const zongjiConvertedPerSecond = median(results.converted);
  const floePerSecond = median(results.floe);
  return { rowsEvents: events.length, changes, passes, zongjiPerSecond, zongjiConvertedPerSecond, floePerSecond, ratio: floePerSecond / zongjiPerSecond, ratioToConverted: floePerSecond / zongjiConvertedPerSecond };
}

function isUpdate(type: number): boolean {
  return type === 24 || type === 31 || type === 167 || type === 170;
}

function replacer(_key: string, v: unknown): unknown {
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('hex');
  if (v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer') return Buffer.from((v as { data: number[] }).data).toString('hex');
  return v;
}

/** One line of the bench report. */
export function formatDecoderFigures(f: DecoderFigures): string {
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  return `row decoder (${n(f.changes)} changes in ${n(f.rowsEvents)} rows events, in-process): floe ${n(f.floePerSecond)} changes/s, zongji ${n(f.zongjiPerSecond)}/s (${f.ratio.toFixed(2)}×), zongji + binlog-values ${n(f.zongjiConvertedPerSecond)}/s (${f.ratioToConverted.toFixed(2)}×)`;
}

async function main(): Promise<void> {
  const arg = (name: string, fallback: number) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? Number(process.argv[i + 1]) : fallback;
  };
  const rows = arg('--rows', 100_000);
  const changes = arg('--changes', 200_000);
  const { startMariaDb } = await import('../src/demo/local-mariadb.js');
  const { loadTable } = await import('./dataset.js');
  const { applyWorkload } = await import('./workload.js');
  const { readWatermark } = await import('../src/source/mysql/snapshot/watermark.js');
  const server = await startMariaDb({ extraArgs: ['--innodb-buffer-pool-size=512M', '--max-allowed-packet=64M', '--local-infile=1', '--binlog-cache-size=4M'] });
  try {
    const connection = { host: server.host, port: server.port, user: server.user, password: server.password };
    const database = 'floe_decoder_bench';
    await loadTable(connection, database, rows, 1);
    const position = async () => {
      const c = await connectMysql(connection);
      try {
        return await readWatermark(c, await detectDialect(c));
      } finally {
        await c.close();
      }
    };
    const from = await position();
    await applyWorkload(connection, database, rows, changes, 1);
    const to = await position();
    process.stdout.write(formatDecoderFigures(await decoderBench(connection, database, from, to)) + '\n');
  } finally {
    await server.stop();
  }
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  main().catch((e) => {
    process.stderr.write(`decoder bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  });
}
