/**
 * Compressed transactions in zongji's stream: every TRANSACTION_PAYLOAD_EVENT packet of the dump
 * connection is replaced by packets of its inner events (transaction-payload.ts), which then pass
 * through zongji as if the server had sent them uncompressed — its GTID and position bookkeeping,
 * its TABLE_MAP handling (the information_schema look-up of a table's columns), the schema filter,
 * floe's raw rows (zongji-raw-events.ts) and the transaction assembly (binlog-transactions.ts).
 *
 * zongji reads the dump stream in the `binlogData` method of its Binlog command class, made per
 * zongji instance (`zongji.BinlogClass`) when it emits 'ready', just before it sends the dump
 * command; this module wraps that method on the instance's class. zongji parses the events after a
 * TABLE_MAP only once it has the table's columns, pausing the connection meanwhile (dump-flow.ts),
 * so the inner events are fed one at a time while the connection is not paused; the rest are fed
 * when it resumes, before the packets that arrived meanwhile, which mysql2 holds back until then.
 * test/source/mysql/binlog/zongji/zongji-raw-events.test.ts pins the zongji internals this relies on;
 * the inner events are made as mysql2 packets (its Packet class, taken from a packet the connection
 * delivered: sequence id, buffer, start, end), so package.json pins mysql2 to one exact version too.
 */
import { FloeError } from '../../../../util/errors.js';
import { SUBSYSTEM } from '../binlog-errors.js';
import type { DumpFlow } from './dump-flow.js';
import { TRANSACTION_PAYLOAD_EVENT, innerEvents } from '../transaction-payload.js';

/** A mysql2 packet: the protocol header (4 bytes) at `start`, then the OK byte and the event. */
interface DumpPacket {
  readonly sequenceId: number;
  readonly buffer: Buffer;
  readonly offset: number;
  readonly end: number;
}
type PacketClass = new (sequenceId: number, buffer: Buffer, start: number, end: number) => DumpPacket;
type BinlogData = (this: unknown, packet: DumpPacket, connection: unknown) => unknown;
interface ZongjiInternals {
  useChecksum: boolean;
  connection?: unknown;
  BinlogClass?: { prototype: { binlogData?: BinlogData } };
  options?: { filename?: string };
  once(event: 'ready', listener: () => void): unknown;
  emit(event: 'error', error: unknown): boolean;
}

/** The protocol header, then the OK byte (0x00) that starts every binlog event packet. */
const EVENT_START = 5;

/**
 * From the dump on, `zongji` delivers the inner events of compressed transactions (see the module
 * header); `flow` is its dump connection's flow control. Call after `zongji.start()`, before 'ready'.
 */
export function expandTransactionPayloads(zongji: unknown, flow: DumpFlow): void {
  const z = zongji as ZongjiInternals;
  z.once('ready', () => {
    const proto = z.BinlogClass?.prototype;
    const connection = z.connection;
    const parse = proto?.binlogData;
    if (!proto || !connection || typeof parse !== 'function') {
      z.emit(
        'error',
        new FloeError(
          SUBSYSTEM,
          'internal',
          "expected @vlasky/zongji 0.9's Binlog command (zongji.BinlogClass.prototype.binlogData) and dump connection when it is ready, found them missing: " +
            'the installed zongji is not the version floe was built with; install the version in package.json',
        ),
      );
      return;
    }
    /** The inner events of the payload being fed, and how each becomes a packet. */
    let pending: { readonly events: Iterator<Buffer>; readonly packet: (bytes: Buffer) => DumpPacket } | undefined;
    let broken = false;
    let command: unknown;
    const fail = (e: unknown): void => {
      // nothing after a transaction floe could not read may be delivered: the session ends here
      broken = true;
      pending = undefined;
      z.emit('error', e);
    };
    /** Feeds the pending inner events while the connection is not paused; true when none is left. */
    const feed = (): boolean => {
      try {
        while (pending && !flow.paused && !broken) {
          const next = pending.events.next();
          if (next.done) pending = undefined;
          else parse.call(command, pending.packet(next.value), connection);
        }
      } catch (e) {
        fail(e);
      }
      return pending === undefined && !broken;
    };
    flow.beforeResume = feed;
    proto.binlogData = function (this: unknown, packet: DumpPacket, conn: unknown): unknown {
      if (broken) return proto.binlogData;
      if (!isPayloadPacket(packet)) return parse.call(this, packet, conn);
      if (pending) {
        // mysql2 hands over packets only while the connection is not paused, and it stays paused
        // until a payload's events are all fed: a second payload now would be fed out of order
        fail(new FloeError(SUBSYSTEM, 'internal', 'expected the events of one compressed transaction to be fed before the next arrives, found a second one while the first was still being fed: report this as a bug'));
        return proto.binlogData;
      }
      command = this;
      try {
        const Packet = packet.constructor as PacketClass;
        const { sequenceId } = packet;
        const events = innerEvents(packet.buffer.subarray(packet.offset + 1, packet.end), z.useChecksum ? 4 : 0, { lead: EVENT_START, file: z.options?.filename });
        pending = { events, packet: (bytes) => new Packet(sequenceId, bytes, 0, bytes.length) };
      } catch (e) {
        fail(e);
        return proto.binlogData;
      }
      feed();
      return proto.binlogData;
    };
  });
}

/** A binlog event packet (OK byte, then the 19-byte common header) of a TRANSACTION_PAYLOAD_EVENT. */
function isPayloadPacket(packet: DumpPacket): boolean {
  const { buffer, offset, end } = packet;
  return end - offset > 20 && buffer[offset] === 0x00 && buffer[offset + 5] === TRANSACTION_PAYLOAD_EVENT;
}
