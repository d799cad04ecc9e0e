/**
 * A MySQL GTID set: which transactions, per source server (UUID, and tag on MySQL 8.3+), a server has
 * executed. Text form as `@@gtid_executed` / `SHOW BINARY LOG STATUS` print it:
 *   `3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:11-18,2c256447-3f0d-431b-9a25-bddf1f1f6ef6:1-27`
 *   `3e11fa47-…:1-5:tag_a:1-3` (tagged GTIDs: a tag names the intervals that follow it).
 *
 * Immutable value object: `add`/`union` return new sets. Transaction numbers (GNOs) are BigInts
 * (MySQL allows 1..2^63-1), never doubles. Intervals are kept sorted and coalesced, so two sets
 * holding the same transactions have the same canonical text (`toString`).
 *
 * GTID sets are only partially ordered (by inclusion); `compareGtidSets` says so by returning
 * `undefined` for sets where neither contains the other (multi-source histories that diverged).
 */
import { FloeError } from '../../../util/errors.js';

/** [first, last] inclusive. */
export type GtidInterval = readonly [bigint, bigint];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TAG = /^[a-z_][a-z0-9_]{0,31}$/;
const MAX_GNO = (1n << 63n) - 1n;

function invalid(what: string, text: string): never {
  throw new FloeError('source.mysql.offset', 'invalid-argument', `expected a MySQL GTID ${what}, found ${JSON.stringify(text.slice(0, 200))}`);
}

/** Source key: "uuid" for untagged GTIDs, "uuid:tag" for tagged ones. */
function sourceKey(uuid: string, tag: string): string {
  return tag ? `${uuid}:${tag}` : uuid;
}

function parseGno(text: string, whole: string): bigint {
  if (!/^\d+$/.test(text)) invalid('set', whole);
  const n = BigInt(text);
  if (n < 1n || n > MAX_GNO) invalid('set (transaction numbers are 1..2^63-1)', whole);
  return n;
}

function coalesce(intervals: GtidInterval[]): GtidInterval[] {
  const sorted = [...intervals].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const out: [bigint, bigint][] = [];
  for (const [s, e] of sorted) {
    const last = out[out.length - 1];
    if (last && s <= last[1] + 1n) {
      if (e > last[1]) last[1] = e;
    } else out.push([s, e]);
  }
  return out;
}

export class MySqlGtidSet {
  /** sourceKey → sorted, coalesced, non-empty intervals. */
  private constructor(private readonly sources: ReadonlyMap<string, readonly GtidInterval[]>) {}

  static readonly EMPTY = new MySqlGtidSet(new Map());

  static parse(text: string): MySqlGtidSet {
    // Whitespace is allowed around the separators (',' ':' '-'), which MySQL's parser skips between
    // tokens, but not inside a token: "aDmiN 123" is no tag and "1 2" no transaction number (it is
    // not 12). MySQL's own tag vectors are in test/source/mysql/schema/mysql8-vectors.test.ts.
    if (text.trim() === '') return MySqlGtidSet.EMPTY;
    const acc = new Map<string, GtidInterval[]>();
    for (const entry of text.split(',')) {
      const parts = entry.split(':').map((p) => p.trim());
      const uuid = (parts[0] ?? '').toLowerCase();
      if (!UUID.test(uuid) || parts.length < 2) invalid('set', text);
      let tag = '';
      let sectionHasIntervals = true; // the untagged section may be empty ("uuid:tag:1")
      let any = false;
      for (const item of parts.slice(1)) {
        if (/^[A-Za-z_]/.test(item)) {
          const t = item.toLowerCase();
          if (!TAG.test(t) || !sectionHasIntervals) invalid('set', text);
          tag = t;
          sectionHasIntervals = false;
          continue;
        }
        const bounds = item.split('-').map((b) => b.trim());
        if (bounds.length > 2) invalid('set', text);
        const s = parseGno(bounds[0]!, text);
        const e = bounds.length === 2 ? parseGno(bounds[1]!, text) : s;
        if (e < s) invalid('set (interval end before start)', text);
        const key = sourceKey(uuid, tag);
        const list = acc.get(key) ?? [];
        list.push([s, e]);
        acc.set(key, list);
        sectionHasIntervals = true;
        any = true;
      }
      if (!any || !sectionHasIntervals) invalid('set', text);
    }
    const sources = new Map<string, GtidInterval[]>();
    for (const [k, v] of acc) sources.set(k, coalesce(v));
    return new MySqlGtidSet(sources);
  }

  /** Parses one GTID "uuid:gno" or "uuid:tag:gno" into its source key and number. */
  static parseGtid(gtid: string): { source: string; gno: bigint } {
    const parts = gtid.split(':').map((p) => p.trim());
    if (parts.length !== 2 && parts.length !== 3) invalid('("uuid:number")', gtid);
    const uuid = parts[0]!.toLowerCase();
    if (!UUID.test(uuid)) invalid('("uuid:number")', gtid);
    let tag = '';
    if (parts.length === 3) {
      tag = parts[1]!.toLowerCase();
      if (!TAG.test(tag)) invalid('("uuid:tag:number")', gtid);
    }
    return { source: sourceKey(uuid, tag), gno: parseGno(parts[parts.length - 1]!, gtid) };
  }

  isEmpty(): boolean {
    return this.sources.size === 0;
  }

  contains(gtid: string): boolean {
    const { source, gno } = MySqlGtidSet.parseGtid(gtid);
    const list = this.sources.get(source);
    if (!list) return false;
    // binary search: intervals are sorted and disjoint
    let lo = 0;
    let hi = list.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const [s, e] = list[mid]!;
      if (gno < s) hi = mid - 1;
      else if (gno > e) lo = mid + 1;
      else return true;
    }
    return false;
  }

  /** This set plus one transaction. */
  add(gtid: string): MySqlGtidSet {
    const { source, gno } = MySqlGtidSet.parseGtid(gtid);
    const list = this.sources.get(source);
    if (list) {
      // fast path: the common case is "next transaction of the same source"
      const last = list[list.length - 1]!;
      if (gno === last[1] + 1n) {
        const next = new Map(this.sources);
        next.set(source, [...list.slice(0, -1), [last[0], gno]]);
        return new MySqlGtidSet(next);
      }
      if (this.contains(gtid)) return this;
    }
    const next = new Map(this.sources);
    next.set(source, coalesce([...(list ?? []), [gno, gno]]));
    return new MySqlGtidSet(next);
  }

  union(other: MySqlGtidSet): MySqlGtidSet {
    if (other.isEmpty()) return this;
    if (this.isEmpty()) return other;
    const next = new Map<string, readonly GtidInterval[]>(this.sources);
    for (const [k, v] of other.sources) {
      const mine = next.get(k);
      next.set(k, mine ? coalesce([...mine, ...v]) : v);
    }
    return new MySqlGtidSet(next);
  }

  /** Every transaction of this set is in `other`. */
  isSubsetOf(other: MySqlGtidSet): boolean {
    for (const [k, list] of this.sources) {
      const theirs = other.sources.get(k);
      if (!theirs) return false;
      let j = 0;
      for (const [s, e] of list) {
        while (j < theirs.length && theirs[j]![1] < s) j++;
        // coalesced intervals: [s, e] must sit inside one interval of theirs
        if (j >= theirs.length || theirs[j]![0] > s || theirs[j]![1] < e) return false;
      }
    }
    return true;
  }

  equals(other: MySqlGtidSet): boolean {
    return this.toString() === other.toString();
  }

  /** Canonical text: sources sorted by uuid then tag (untagged first), as MySQL prints them. */
  toString(): string {
    const byUuid = new Map<string, { tag: string; list: readonly GtidInterval[] }[]>();
    for (const [key, list] of this.sources) {
      const i = key.indexOf(':');
      const uuid = i < 0 ? key : key.slice(0, i);
      const tag = i < 0 ? '' : key.slice(i + 1);
      const arr = byUuid.get(uuid) ?? [];
      arr.push({ tag, list });
      byUuid.set(uuid, arr);
    }
    const ranges = (list: readonly GtidInterval[]) => list.map(([s, e]) => (s === e ? `${s}` : `${s}-${e}`)).join(':');
    return [...byUuid.keys()]
      .sort()
      .map((uuid) => {
        const groups = byUuid.get(uuid)!.sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0));
        return uuid + groups.map((g) => (g.tag ? `:${g.tag}` : '') + ':' + ranges(g.list)).join('');
      })
      .join(',');
  }
}

/** -1, 0, 1 by inclusion; `undefined` when neither set contains the other. */
export function compareGtidSets(a: MySqlGtidSet, b: MySqlGtidSet): -1 | 0 | 1 | undefined {
  const ab = a.isSubsetOf(b);
  const ba = b.isSubsetOf(a);
  if (ab && ba) return 0;
  if (ab) return -1;
  if (ba) return 1;
  return undefined;
}
