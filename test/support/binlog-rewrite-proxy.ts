/**
 * A TCP proxy to a MySQL / MariaDB server that rewrites binlog events in flight: after the client
 * sends a binlog dump command (a packet with sequence id 0 whose first byte is COM_BINLOG_DUMP or
 * COM_BINLOG_DUMP_GTID), every server packet of that connection is a binlog event packet — OK byte,
 * then the event (common header: timestamp u32, type u8, server id u32, length u32, log_pos u32,
 * flags u16; body; checksum) — and `rewrite` may change the event's bytes in place (its length stays).
 * A changed event's CRC32 trailer is left stale: zongji does not verify it. Everything else — the
 * server, the protocol, the client — is the real component. Its clients connect without TLS
 * (`tls: { mode: 'disabled' }`): the proxy must read the events' bytes.
 */
import net from 'node:net';

const COM_BINLOG_DUMP = 0x12;
const COM_BINLOG_DUMP_GTID = 0x1e;

export interface BinlogRewriteProxy {
  readonly port: number;
  /** Events `rewrite` changed so far. */
  readonly rewritten: number;
  /** Binlog dump commands clients sent so far (one per replication session). */
  readonly dumps: number;
  close(): Promise<void>;
}

/** `rewrite(event)`: the event's bytes (from its common header to its end); true when it changed them. */
export async function startBinlogRewriteProxy(target: { host: string; port: number }, rewrite?: (event: Buffer) => boolean): Promise<BinlogRewriteProxy> {
  const sockets = new Set<net.Socket>();
  let rewritten = 0;
  let dumps = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    let dumping = false;
    let pending = Buffer.alloc(0);
    client.on('data', (chunk) => {
      // commands start a packet: 3-byte length, sequence id, command byte
      if (chunk.length >= 5 && chunk[3] === 0 && (chunk[4] === COM_BINLOG_DUMP || chunk[4] === COM_BINLOG_DUMP_GTID)) {
        dumping = true;
        dumps++;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!dumping || !rewrite) {
        client.write(chunk);
        return;
      }
      pending = Buffer.concat([pending, chunk]);
      let at = 0;
      while (pending.length - at >= 4) {
        const length = pending.readUIntLE(at, 3);
        if (pending.length - at < 4 + length) break;
        const payload = pending.subarray(at + 4, at + 4 + length);
        if (payload.length >= 20 && payload[0] === 0x00 && rewrite(payload.subarray(1))) rewritten++;
        at += 4 + length;
      }
      client.write(pending.subarray(0, at));
      pending = Buffer.from(pending.subarray(at));
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    get rewritten() {
      return rewritten;
    },
    get dumps() {
      return dumps;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
