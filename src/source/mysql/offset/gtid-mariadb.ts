/**
 * A MariaDB GTID position: the last transaction per replication domain, as `@@gtid_binlog_pos`,
 * `BINLOG_GTID_POS(file, pos)` and `@slave_connect_state` print it: `0-1-1234,1-3-45`
 * (domain-server-sequence). Within one domain the binlog order is total and sequence numbers grow
 * with it (MariaDB KB "Global Transaction ID": "seq_no ... is monotonically increasing within a
 * domain"), so one triple per domain names everything before it. Sequence numbers are u64: BigInt.
 *
 * Ordering: positions are compared domain by domain on the sequence number (the server id records
 * who wrote it, it does not order). That is a partial order across domains: `compareMariaDbPositions`
 * returns `undefined` when one domain is ahead and another behind.
 */
import { FloeError } from '../../../util/errors.js';

export interface MariaDbGtid {
  readonly domain: number;
  readonly server: number;
  readonly seq: bigint;
}

const MAX_U32 = 0xffffffff;
const MAX_U64 = (1n << 64n) - 1n;

function invalid(text: string): never {
  throw new FloeError(
    'source.mysql.offset',
    'invalid-argument',
    `expected a MariaDB GTID "domain-server-sequence" (e.g. "0-1-1234"), found ${JSON.stringify(text.slice(0, 200))}`,
  );
}

export function parseMariaDbGtid(text: string): MariaDbGtid {
  const m = /^(\d+)-(\d+)-(\d+)$/.exec(text.trim());
  if (!m) invalid(text);
  const domain = Number(m[1]!);
  const server = Number(m[2]!);
  const seq = BigInt(m[3]!);
  if (domain > MAX_U32 || server > MAX_U32 || seq > MAX_U64) invalid(text);
  return { domain, server, seq };
}

function formatMariaDbGtid(g: MariaDbGtid): string {
  return `${g.domain}-${g.server}-${g.seq}`;
}

export class MariaDbGtidPosition {
  private constructor(private readonly domains: ReadonlyMap<number, MariaDbGtid>) {}

  static readonly EMPTY = new MariaDbGtidPosition(new Map());

  static parse(text: string): MariaDbGtidPosition {
    const trimmed = text.replace(/\s+/g, '');
    if (trimmed === '') return MariaDbGtidPosition.EMPTY;
    const domains = new Map<number, MariaDbGtid>();
    for (const entry of trimmed.split(',')) {
      const g = parseMariaDbGtid(entry);
      if (domains.has(g.domain)) {
        throw new FloeError('source.mysql.offset', 'invalid-argument', `MariaDB GTID position ${JSON.stringify(text)} names domain ${g.domain} twice; expected one entry per domain`);
      }
      domains.set(g.domain, g);
    }
    return new MariaDbGtidPosition(domains);
  }

  isEmpty(): boolean {
    return this.domains.size === 0;
  }

  get(domain: number): MariaDbGtid | undefined {
    return this.domains.get(domain);
  }

  entries(): MariaDbGtid[] {
    return [...this.domains.values()].sort((a, b) => a.domain - b.domain);
  }

  /** Whether the transaction `gtid` is at or before this position in its domain. */
  covers(gtid: string | MariaDbGtid): boolean {
    const g = typeof gtid === 'string' ? parseMariaDbGtid(gtid) : gtid;
    const last = this.domains.get(g.domain);
    return last !== undefined && g.seq <= last.seq;
  }

  /** The position after transaction `gtid` (its domain's entry replaced, as a replica records it). */
  advance(gtid: string | MariaDbGtid): MariaDbGtidPosition {
    const g = typeof gtid === 'string' ? parseMariaDbGtid(gtid) : gtid;
    const next = new Map(this.domains);
    next.set(g.domain, { domain: g.domain, server: g.server, seq: g.seq });
    return new MariaDbGtidPosition(next);
  }

  equals(other: MariaDbGtidPosition): boolean {
    return this.toString() === other.toString();
  }

  /** Domains sorted ascending, as the server prints them. */
  toString(): string {
    return this.entries().map(formatMariaDbGtid).join(',');
  }
}

/**
 * -1 when `a` is at or behind `b` in every domain (and behind in one), 0 when equal per domain,
 * 1 for the reverse, `undefined` when neither. A domain missing from a position counts as "nothing
 * executed there yet".
 */
export function compareMariaDbPositions(a: MariaDbGtidPosition, b: MariaDbGtidPosition): -1 | 0 | 1 | undefined {
  let less = false;
  let greater = false;
  const domains = new Set([...a.entries().map((g) => g.domain), ...b.entries().map((g) => g.domain)]);
  for (const d of domains) {
    const x = a.get(d)?.seq ?? -1n;
    const y = b.get(d)?.seq ?? -1n;
    if (x < y) less = true;
    else if (x > y) greater = true;
  }
  if (less && greater) return undefined;
  if (less) return -1;
  if (greater) return 1;
  return 0;
}
