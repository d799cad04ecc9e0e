/**
 * A TCP proxy that can go silent: floe connects to MySQL through it, and `stall()` makes it stop
 * forwarding in both directions without closing anything — the way a hung server, a frozen VM or a
 * half-dead NAT looks from the client: the socket stays open, nothing arrives. Connections opened
 * during the stall are accepted (the TCP handshake completes) but not connected upstream, so the
 * MySQL greeting never comes. `resume()` forwards again; what was sent meanwhile is delivered then
 * (the sockets were only paused), and held connections are connected upstream.
 *
 * `moveTo()` points it at another server and drops the open connections, the way a virtual IP or a
 * DNS name moves to a promoted replica in a failover: the client's next connection reaches the new
 * server at the same address.
 *
 * The idea of test/support/s3-fault-proxy.ts, one layer down (raw TCP instead of HTTP).
 */
import net, { type AddressInfo } from 'node:net';

interface Pair {
  client: net.Socket;
  upstream: net.Socket | undefined;
  /** Bytes received during a stall, per direction, delivered on resume. */
  toUpstream: Buffer[];
  toClient: Buffer[];
  end: () => void;
}

export class TcpStallProxy {
  private readonly server: net.Server;
  private readonly pairs = new Set<Pair>();
  private stalled = false;
  /** Connections accepted so far (each one floe opened). */
  accepted = 0;

  private constructor(
    private targetHost: string,
    private targetPort: number,
  ) {
    this.server = net.createServer((client) => this.accept(client));
  }

  static async start(targetHost: string, targetPort: number): Promise<TcpStallProxy> {
    const proxy = new TcpStallProxy(targetHost, targetPort);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Connections currently open through the proxy. */
  get open(): number {
    return this.pairs.size;
  }

  /** Stops forwarding: every socket paused, new connections held. */
  stall(): void {
    this.stalled = true;
    for (const p of this.pairs) {
      p.client.pause();
      p.upstream?.pause();
    }
  }

  resume(): void {
    this.stalled = false;
    for (const p of this.pairs) {
      if (!p.upstream) this.connectUpstream(p);
      for (const b of p.toUpstream.splice(0)) p.upstream!.write(b);
      for (const b of p.toClient.splice(0)) p.client.write(b);
      p.client.resume();
      p.upstream?.resume();
    }
  }

  /** Forwards new connections to another server and closes the open ones (a failover). */
  moveTo(host: string, port: number): void {
    this.targetHost = host;
    this.targetPort = port;
    for (const p of [...this.pairs]) p.end();
  }

  async close(): Promise<void> {
    for (const p of this.pairs) {
      p.client.destroy();
      p.upstream?.destroy();
    }
    this.pairs.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    this.accepted++;
    const pair: Pair = { client, upstream: undefined, toUpstream: [], toClient: [], end: () => {} };
    pair.end = () => {
      if (!this.pairs.delete(pair)) return;
      client.destroy();
      pair.upstream?.destroy();
    };
    this.pairs.add(pair);
    client.on('error', pair.end);
    client.on('close', pair.end);
    // forwarded by hand, not with pipe(): pipe() resumes a paused source on the destination's 'drain'
    client.on('data', (b: Buffer) => {
      if (this.stalled || !pair.upstream) pair.toUpstream.push(b);
      else pair.upstream.write(b);
    });
    if (this.stalled) client.pause();
    else this.connectUpstream(pair);
  }

  private connectUpstream(pair: Pair): void {
    const upstream = net.connect(this.targetPort, this.targetHost);
    pair.upstream = upstream;
    upstream.on('error', pair.end);
    upstream.on('close', pair.end);
    upstream.on('data', (b: Buffer) => {
      if (this.stalled) pair.toClient.push(b);
      else pair.client.write(b);
    });
    if (this.stalled) upstream.pause();
  }
}
