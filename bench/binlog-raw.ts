/**
 * Raw decode mode ("decode only, no sink"): streams a binlog range through zongji — the same
 * session, connection options and value adaptation as the reader — and only counts what zongji
 * decoded. No transaction assembly, no value conversion, no queue. The benchmark (ceilings.ts) uses
 * it to measure zongji's own decode rate as the ceiling for the full reader;
 * test/source/mysql/binlog/binlog-reader.test.ts checks its counts. Not part of floe.
 */
import type { AnyBinlogEvent, RotateEvent } from '@vlasky/zongji';
import { FloeError } from '../src/util/errors.js';
import { BINLOG_CONNECTION_OPTIONS } from '../src/source/mysql/binlog/zongji/binlog-values.js';
import { classifyBinlogError } from '../src/source/mysql/binlog/binlog-errors.js';
import { BinlogSession } from '../src/source/mysql/binlog/zongji/binlog-session.js';
import { connectMysql, driverOptions, type MysqlConnectionConfig } from '../src/source/mysql/client.js';
import { compareBinlogFiles, formatOffset, type BinlogOffset } from '../src/source/mysql/offset/offset.js';

export interface RawDecodeOptions {
  readonly connection: MysqlConnectionConfig;
  readonly serverId: number;
  /** File/position to start at. */
  readonly from: BinlogOffset;
  /** File/position to stop at (e.g. a watermark taken after the workload). */
  readonly to: BinlogOffset;
  /** Only decode rows of these databases (zongji TableMap filter); default all. */
  readonly databases?: readonly string[];
}

export interface RawDecodeStats {
  readonly events: number;
  readonly rowEvents: number;
  readonly rows: number;
  readonly elapsedMs: number;
}

export async function drainRawBinlog(options: RawDecodeOptions): Promise<RawDecodeStats> {
  const { from, to } = options;
  if (from.file === undefined || from.position === undefined || to.file === undefined || to.position === undefined) {
    throw new FloeError('source.mysql.binlog', 'invalid-argument', `raw decode needs file/position offsets, found ${formatOffset(from)} → ${formatOffset(to)}`);
  }
  // the raw session goes the way a session of floe's goes (for source.tls.mode preferred: TLS when the server offers it)
  const probe = await connectMysql(options.connection);
  const connection = { ...(await driverOptions(options.connection, probe.encrypted ? 'tls' : 'plain')), ...BINLOG_CONNECTION_OPTIONS };
  await probe.close();
  let events = 0;
  let rowEvents = 0;
  let rows = 0;
  let file = from.file;
  const started = Date.now();
  return new Promise<RawDecodeStats>((resolve, reject) => {
    let session: BinlogSession | undefined;
    const finish = (e?: unknown) => {
      const s = session;
      session = undefined;
      void s?.stop().then(() => (e ? reject(classifyBinlogError(e, from)) : resolve({ events, rowEvents, rows, elapsedMs: Date.now() - started })));
    };
    const reached = (pos: number) => {
      const c = compareBinlogFiles(file, to.file!);
      return c !== undefined && (c > 0 || (c === 0 && pos >= to.position!));
    };
    session = new BinlogSession({
      connection,
      serverId: options.serverId,
      start: { file: from.file, position: from.position },
      includeSchema: options.databases ? Object.fromEntries(options.databases.map((d) => [d, true as const])) : undefined,
      heartbeatMs: 2000,
      onEvent: (e: AnyBinlogEvent) => {
        events++;
        const name = e.getEventName();
        if (name === 'rotate') file = (e as RotateEvent).binlogName;
        else if (name === 'writerows' || name === 'updaterows' || name === 'deleterows') {
          rowEvents++;
          rows += (e as unknown as { rows?: unknown[] }).rows?.length ?? 0;
        }
        if (session && e.nextPosition > 0 && name !== 'rotate' && reached(e.nextPosition)) finish();
      },
      onError: (e) => finish(e),
    });
    if (reached(from.position!)) finish();
    else session.start();
  });
}
