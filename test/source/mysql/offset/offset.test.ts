import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MySqlGtidSet, compareGtidSets } from '../../../../src/source/mysql/offset/gtid-set.js';
import { MariaDbGtidPosition } from '../../../../src/source/mysql/offset/gtid-mariadb.js';
import {
  type BinlogOffset,
  type EventPosition,
  type GtidState,
  advanceGtids,
  compareBinlogFiles,
  compareOffsets,
  isAfter,
  minOffset,
  parseOffset,
  serializeOffset,
} from '../../../../src/source/mysql/offset/offset.js';
import { isFloeError } from '../../../../src/util/errors.js';

const UUIDS = ['3e11fa47-71ca-11e1-9e33-c80aa9429562', '2c256447-3f0d-431b-9a25-bddf1f1f6ef6', 'ffffffff-0000-4000-8000-000000000001'];
const TAGS = ['', 'tag_a', 'zz'];

/** A GTID "uuid[:tag]:n" with small numbers (to collide often) or huge ones (to exercise BigInt). */
const gtidArb = fc
  .tuple(fc.constantFrom(...UUIDS), fc.constantFrom(...TAGS), fc.oneof(fc.bigInt({ min: 1n, max: 40n }), fc.bigInt({ min: 1n, max: (1n << 63n) - 1n })))
  .map(([u, t, n]) => (t ? `${u}:${t}:${n}` : `${u}:${n}`));

const setArb = fc.array(gtidArb, { maxLength: 30 }).map((gs) => gs.reduce((s, g) => s.add(g), MySqlGtidSet.EMPTY));

describe('MySQL GTID sets', () => {
  it('parse(toString(x)) = x and the text is canonical', () => {
    fc.assert(
      fc.property(setArb, (s) => {
        const text = s.toString();
        const back = MySqlGtidSet.parse(text);
        expect(back.toString()).toBe(text);
        expect(back.equals(s)).toBe(true);
        // the upper-case, spaced form MySQL sometimes prints reads the same
        expect(MySqlGtidSet.parse(text.toUpperCase().replace(/,/g, ',\n')).toString()).toBe(text);
      }),
    );
  });

  it('contains/union/subset agree with plain set semantics', () => {
    fc.assert(
      fc.property(fc.array(gtidArb, { maxLength: 20 }), fc.array(gtidArb, { maxLength: 20 }), fc.array(gtidArb, { maxLength: 10 }), (as, bs, probes) => {
        const a = as.reduce((s, g) => s.add(g), MySqlGtidSet.EMPTY);
        const b = bs.reduce((s, g) => s.add(g), MySqlGtidSet.EMPTY);
        const u = a.union(b);
        for (const g of [...as, ...bs, ...probes]) {
          expect(u.contains(g)).toBe(a.contains(g) || b.contains(g));
          expect(a.contains(g)).toBe(as.some((x) => MySqlGtidSet.parseGtid(x).source === MySqlGtidSet.parseGtid(g).source && MySqlGtidSet.parseGtid(x).gno === MySqlGtidSet.parseGtid(g).gno));
        }
        expect(a.isSubsetOf(u)).toBe(true);
        expect(b.isSubsetOf(u)).toBe(true);
        expect(u.isSubsetOf(a)).toBe(bs.every((g) => a.contains(g)));
        const c = compareGtidSets(a, u);
        expect(c === -1 || c === 0).toBe(true);
      }),
    );
  });

  it('parses what MySQL prints and rejects malformed text', () => {
    const s = MySqlGtidSet.parse('3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:11-18:6-10,\n2c256447-3f0d-431b-9a25-bddf1f1f6ef6:1-27:tag_a:3');
    expect(s.toString()).toBe('2c256447-3f0d-431b-9a25-bddf1f1f6ef6:1-27:tag_a:3,3e11fa47-71ca-11e1-9e33-c80aa9429562:1-18');
    expect(s.contains('2c256447-3f0d-431b-9a25-bddf1f1f6ef6:tag_a:3')).toBe(true);
    expect(s.contains('2c256447-3f0d-431b-9a25-bddf1f1f6ef6:3')).toBe(true);
    expect(s.contains('2c256447-3f0d-431b-9a25-bddf1f1f6ef6:tag_a:4')).toBe(false);
    for (const badText of ['x:1', '3e11fa47-71ca-11e1-9e33-c80aa9429562', '3e11fa47-71ca-11e1-9e33-c80aa9429562:0', '3e11fa47-71ca-11e1-9e33-c80aa9429562:5-3', '3e11fa47-71ca-11e1-9e33-c80aa9429562:1:tag']) {
      expect(() => MySqlGtidSet.parse(badText)).toThrow(/expected a MySQL GTID/);
    }
  });
});

describe('MariaDB GTID positions', () => {
  const gArb = fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 5 }), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }));
  it('parse(toString(x)) = x; advance and covers', () => {
    fc.assert(
      fc.property(fc.array(gArb, { maxLength: 10 }), ([...gs]) => {
        let p = MariaDbGtidPosition.EMPTY;
        for (const [d, s, n] of gs) {
          p = p.advance(`${d}-${s}-${n}`);
          expect(p.covers(`${d}-${s}-${n}`)).toBe(true);
          if (n < (1n << 64n) - 1n) expect(p.covers(`${d}-${s}-${n + 1n}`)).toBe(false);
        }
        expect(MariaDbGtidPosition.parse(p.toString()).toString()).toBe(p.toString());
      }),
    );
    expect(() => MariaDbGtidPosition.parse('0-1-5,0-2-6')).toThrow(/twice/);
    expect(() => MariaDbGtidPosition.parse('0-1')).toThrow(/domain-server-sequence/);
  });
});

/**
 * One simulated server history: transactions across rotating files, each with a MySQL GTID or a
 * MariaDB GTID. Boundary i = the offset after i transactions. Everything the tests compare is
 * derived from the index, so the expected order is known.
 */
interface History {
  flavor: 'mysql' | 'mariadb';
  boundaries: BinlogOffset[]; // boundaries[i]: after transaction i-1 (boundaries[0]: start)
  events: EventPosition[][]; // events[i]: the changes of transaction i
}

const historyArb: fc.Arbitrary<History> = fc
  .tuple(fc.constantFrom<'mysql' | 'mariadb'>('mysql', 'mariadb'), fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 1 })), { minLength: 1, maxLength: 25 }))
  .map(([flavor, txns]) => {
    const server = { serverUuid: flavor === 'mysql' ? UUIDS[0] : undefined, serverId: 7 };
    let fileNo = 9; // crosses 000009 → 000010 to exercise numeric file order
    let pos = 256;
    let gtids: GtidState = flavor === 'mysql' ? { flavor, set: MySqlGtidSet.parse(`${UUIDS[1]}:1-3`) } : { flavor, position: MariaDbGtidPosition.parse('1-2-10') };
    const seq = new Map<number, bigint>([[1, 10n]]); // continues the start position "1-2-10"
    const file = () => `binlog.${String(fileNo).padStart(6, '0')}`;
    const boundaries: BinlogOffset[] = [{ file: file(), position: pos, gtids, ...server }];
    const events: EventPosition[][] = [];
    for (const [rotate, size, changes, domain] of txns) {
      if (rotate) {
        fileNo++;
        pos = 256;
      }
      pos += size * 100;
      let gtid: string;
      if (flavor === 'mysql') {
        const n = (seq.get(0) ?? 0n) + 1n;
        seq.set(0, n);
        gtid = `${UUIDS[0]}:${n}`;
      } else {
        const n = (seq.get(domain) ?? 0n) + 1n;
        seq.set(domain, n);
        gtid = `${domain}-7-${n}`;
      }
      const evs = Array.from({ length: changes }, (_, k) => ({ file: file(), commitPosition: pos, gtid, eventIndex: k, ...server }));
      events.push(evs);
      const after = offsetAfter(evs[0], gtids);
      gtids = after.gtids!;
      boundaries.push(after);
    }
    return { flavor, boundaries, events };
  });

/** The offset after the transaction of `event`: its commit position, and the GTID state with its GTID added. */
function offsetAfter(event: EventPosition, gtidsBefore: GtidState): BinlogOffset {
  const gtids = event.gtid ? advanceGtids(gtidsBefore, event.gtid) : gtidsBefore;
  return { file: event.file, position: event.commitPosition, gtids, ...(event.serverUuid === undefined ? {} : { serverUuid: event.serverUuid }), ...(event.serverId === undefined ? {} : { serverId: event.serverId }) };
}

/** Same offsets without server identity or file/position: only GTIDs can order them. */
function gtidOnly(o: BinlogOffset): BinlogOffset {
  return { gtids: o.gtids };
}
function otherServer<T extends object>(o: T): T {
  return { ...o, serverUuid: undefined, serverId: 999 };
}

describe('binlog offsets', () => {
  it('compare is a total preorder that matches the history order (file/pos and GTID paths)', () => {
    fc.assert(
      fc.property(historyArb, (h) => {
        const n = h.boundaries.length;
        for (let i = 0; i < n; i++) {
          for (let j = 0; j < n; j++) {
            const expected = Math.sign(i - j);
            expect(Math.sign(compareOffsets(h.boundaries[i], h.boundaries[j]))).toBe(expected);
            // MariaDB positions with several domains are only partially ordered by GTIDs; MySQL
            // single-source sets are a chain
            if (h.flavor === 'mysql') expect(Math.sign(compareOffsets(gtidOnly(h.boundaries[i]), gtidOnly(h.boundaries[j])))).toBe(expected);
          }
        }
        // transitivity over every ordering of a triple (first, middle, last boundary): the ordering
        // that compares in order reaches the conclusion, whatever the number of boundaries
        const [a, b, c] = [h.boundaries[0], h.boundaries[Math.floor(n / 2)], h.boundaries[n - 1]];
        let concluded = 0;
        for (const [x, y, z] of [[a, b, c], [a, c, b], [b, a, c], [b, c, a], [c, a, b], [c, b, a]] as const) {
          if (compareOffsets(x!, y!) <= 0 && compareOffsets(y!, z!) <= 0) {
            expect(compareOffsets(x!, z!)).toBeLessThanOrEqual(0);
            concluded++;
          }
        }
        expect(concluded).toBeGreaterThan(0);
        expect(minOffset([c, b, a])).toBe(a);
      }),
    );
  });

  it('isAfter(event, watermark) is exact by position and by GTID', () => {
    fc.assert(
      fc.property(historyArb, (h) => {
        for (let t = 0; t < h.events.length; t++) {
          for (let w = 0; w < h.boundaries.length; w++) {
            const expected = t >= w; // transaction t commits after boundary w iff t >= w
            for (const e of h.events[t]) {
              expect(isAfter(e, h.boundaries[w])).toBe(expected);
              // from another server: only the GTID can answer
              expect(isAfter(otherServer(e), h.boundaries[w])).toBe(expected);
            }
          }
        }
      }),
    );
  });

  it('parse(serialize(x)) = x for offsets', () => {
    fc.assert(
      fc.property(historyArb, (h) => {
        for (const o of h.boundaries) {
          const text = serializeOffset(o);
          expect(JSON.parse(text)).toBeTypeOf('object'); // plain JSON, no BigInt
          const back = parseOffset(text);
          expect(serializeOffset(back)).toBe(text);
          expect(compareOffsets(back, o)).toBe(0);
        }
      }),
    );
  });

  it('refuses to order what cannot be ordered, with a clear error', () => {
    const a: BinlogOffset = { file: 'binlog.000001', position: 100, serverId: 1 };
    const b: BinlogOffset = { file: 'binlog.000001', position: 200, serverId: 2 };
    expect(() => compareOffsets(a, b)).toThrow(/different servers/);
    try {
      compareOffsets(a, b);
    } catch (e) {
      expect(isFloeError(e, 'invalid-argument')).toBe(true);
    }
    const x: BinlogOffset = { gtids: { flavor: 'mysql', set: MySqlGtidSet.parse(`${UUIDS[0]}:1-5`) } };
    const y: BinlogOffset = { gtids: { flavor: 'mysql', set: MySqlGtidSet.parse(`${UUIDS[1]}:1-5`) } };
    expect(() => compareOffsets(x, y)).toThrow(/not contained in one another/);
    expect(() => parseOffset('{"file":"binlog.000001"}')).toThrow(/file and pos go together/);
    expect(() => parseOffset('{"pos":1}')).toThrow(/file and pos go together/);
    expect(() => parseOffset('nope')).toThrow(/not JSON/);
  });

  it('orders binlog files by their sequence number', () => {
    expect(compareBinlogFiles('binlog.000009', 'binlog.000010')).toBe(-1);
    expect(compareBinlogFiles('binlog.999999', 'binlog.1000000')).toBe(-1);
    expect(compareBinlogFiles('a.000001', 'b.000002')).toBeUndefined();
  });
});
