/**
 * The snapshot's chunk order when a table's rows are removed through the keys of another table's
 * removed rows (read-order.ts): every chunk of the table it follows is read before its first chunk
 * starts, whatever the parallelism, and a cycle does not hang the read.
 */
import { describe, expect, it } from 'vitest';
import { ReadOrder } from '../../../../src/source/mysql/snapshot/read-order.js';

const t = (table: string) => ({ database: 'd', table });
const chunks = (table: string, n: number) => Array.from({ length: n }, (_, i) => ({ table: t(table), i }));

/** Reads every item with `workers` workers, each read taking a random few ms; the log of starts and ends. */
async function read(order: ReadOrder<{ table: { database: string; table: string }; i: number }>, workers: number): Promise<string[]> {
  const log: string[] = [];
  let next = 0;
  const worker = async () => {
    for (;;) {
      const item = order.items[next++];
      if (!item) return;
      await order.ready(item);
      log.push(`start ${item.table.table}`);
      await new Promise((r) => setTimeout(r, Math.random() * 4));
      log.push(`end ${item.table.table}`);
      order.done(item);
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  return log;
}

describe('snapshot read order', () => {
  it('starts a table only after every chunk of the tables it follows has been read', async () => {
    // listed grandchild first: the order moves it after the child, the child after nothing
    const items = [...chunks('grandchild', 5), ...chunks('other', 3), ...chunks('child', 6)];
    const after = (x: { table: string }) => (x.table === 'grandchild' ? [t('child')] : []);
    for (const workers of [1, 3, 8]) {
      const order = new ReadOrder(items, after);
      expect(order.items.map((x) => x.table.table).indexOf('grandchild')).toBeGreaterThan(order.items.map((x) => x.table.table).lastIndexOf('child'));
      const log = await read(order, workers);
      const lastChildEnd = log.lastIndexOf('end child');
      const firstGrandchildStart = log.indexOf('start grandchild');
      expect(firstGrandchildStart).toBeGreaterThan(lastChildEnd);
      expect(log.filter((l) => l.startsWith('end')).length).toBe(items.length);
    }
  });

  it('reads tables in a cycle as unrelated, and wakes waiting workers when cancelled', async () => {
    const items = [...chunks('a', 2), ...chunks('b', 2)];
    const cycle = new ReadOrder(items, (x) => [t(x.table === 'a' ? 'b' : 'a')]);
    expect((await read(cycle, 2)).length).toBe(8);

    const order = new ReadOrder([...chunks('child', 1), ...chunks('grandchild', 1)], (x) => (x.table === 'grandchild' ? [t('child')] : []));
    const waiting = order.ready(order.items[1]!);
    order.cancel();
    await expect(waiting).resolves.toBeUndefined();
  });
});
