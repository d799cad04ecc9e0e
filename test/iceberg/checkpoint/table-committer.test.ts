/**
 * One table's checkpoint commits (table-committer.ts) through the real filesystem catalog: stamps in the
 * snapshot summary, lastCommitted read back from the table, skipping a checkpoint already committed (by
 * this or another process of the job), stamps-only commits, and the table read back by icebird.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { TableIdentifier } from '../../../src/iceberg/metadata/catalog.js';
import { currentSnapshot } from '../../../src/iceberg/spec/snapshot-ids.js';
import { commitRowDelta, commitSnapshot, loadCatalogTable, readManifestEntries, readSnapshotManifests } from '../../../src/iceberg/table/index.js';
import { lakeTableRows } from '../../e2e/support/lake-compare.js';
import { TableCommitter, lastCommitted } from '../../../src/iceberg/checkpoint/index.js';
import { insert, remove, removeKey, TableChangeWriter, update } from '../../../src/iceberg/writer/index.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { armFailpoint, disarmFailpoints } from '../../../src/util/failpoints.js';
import type { Row } from '../../../src/model/values.js';
import { icebirdRows } from '../writer/icebird-read.js';
import { addedDeleteFiles } from '../../support/lake-integrity.js';
import { keyedSchema, localPath, newTable, useTempWarehouse } from '../writer/support.js';

const w = useTempWarehouse();
afterEach(() => disarmFailpoints());

const enc = new TextEncoder();
function row(id: bigint, grp: number, name: string): Row {
  return [id, grp, name, '1.00', enc.encode(name)];
}

async function table(formatVersion: 2 | 3 = 2): Promise<TableIdentifier> {
  const t = await newTable(w, { formatVersion });
  return t.identifier;
}

function sortedNames(rows: Record<string, unknown>[]): [bigint, string][] {
  return rows.map((r) => [r.id as bigint, r.name as string] as [bigint, string]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

describe('checkpoint commits', () => {
  it('commits one stamped snapshot per checkpoint and reads the stamps back with lastCommitted', async () => {
    const id = await table();
    const c = new TableCommitter({ identifier: id, catalog: w.catalog, jobId: 'job-a' });
    expect(await c.open()).toBeUndefined();
    await c.write([insert(row(1n, 1, 'a')), insert(row(2n, 1, 'b'))]);
    const first = await c.commit(1n, '{"gtid":"x:1-10"}');
    expect([first].map((t) => t.status)).toEqual(['committed']);
    await c.write([update(row(1n, 1, 'a2')), removeKey([2n]), insert(row(3n, 2, 'c'))]);
    const second = await c.commit(2n, '{"gtid":"x:1-20"}');
    const snap = second.snapshot!;
    expect(snap.summary).toMatchObject({
      operation: 'overwrite',
      'floe.job-id': 'job-a',
      'floe.checkpoint-id': '2',
      'floe.max-committed-checkpoint-id': '2',
      'floe.source-offset': '{"gtid":"x:1-20"}',
    });
    const loaded = await loadCatalogTable(w.catalog, id);
    expect(lastCommitted(loaded, 'job-a')).toEqual({ checkpointId: 2n, snapshotCheckpointId: 2n, sourceOffset: '{"gtid":"x:1-20"}', snapshotId: snap.snapshotId });
    expect(lastCommitted(loaded, 'another-job')).toBeUndefined();
    expect(await c.lastCommitted()).toMatchObject({ checkpointId: 2n });
    expect(sortedNames(await icebirdRows(loaded.metadata.location))).toEqual([
      [1n, 'a2'],
      [3n, 'c'],
    ]);
  });

  it('finds its last checkpoint after another engine compacted the table and expired every older snapshot', async () => {
    const id = await table(3);
    const c = new TableCommitter({ identifier: id, catalog: w.catalog, jobId: 'job-m' });
    await c.open();
    await c.write([insert(row(1n, 1, 'a')), insert(row(2n, 1, 'b'))]);
    await c.commit(1n, '{"gtid":"x:1-10"}');
    await c.write([update(row(1n, 1, 'a2'))]);
    const second = (await c.commit(2n, '{"gtid":"x:1-20"}')).snapshot!;
    // another engine: a snapshot without floe's summary (a rewrite), then expiry down to it alone
    let t = await loadCatalogTable(w.catalog, id);
    const foreign = (await commitRowDelta(t, {}, { summary: { 'engine': 'other' } })).table;
    const older = foreign.metadata.snapshots.filter((x) => x.snapshotId !== foreign.metadata.currentSnapshotId).map((x) => x.snapshotId);
    await w.catalog.commitTable(id, [], [{ action: 'remove-snapshots', snapshotIds: older }]);
    t = await loadCatalogTable(w.catalog, id);
    expect(t.metadata.snapshots).toHaveLength(1);
    expect(t.metadata.snapshots[0].summary['floe.job-id']).toBeUndefined();
    expect(lastCommitted(t, 'job-m')).toEqual({ checkpointId: 2n, snapshotCheckpointId: 2n, sourceOffset: '{"gtid":"x:1-20"}', snapshotId: second.snapshotId });
    // and the job goes on from there: checkpoint 2 is not committed again, 3 is
    const again = new TableCommitter({ identifier: id, catalog: w.catalog, jobId: 'job-m' });
    await again.open();
    await again.write([insert(row(9n, 1, 'z'))]);
    expect((await again.commit(2n, '{"gtid":"x:1-20"}')).status).toBe('already-committed');
    await again.write([insert(row(9n, 1, 'z'))]);
    expect((await again.commit(3n, '{"gtid":"x:1-30"}')).status).toBe('committed');
    expect(lastCommitted(await loadCatalogTable(w.catalog, id), 'job-m')).toMatchObject({ checkpointId: 3n, sourceOffset: '{"gtid":"x:1-30"}' });
  });

  /** Another writer's compaction of one data file: its live rows rewritten to a new file, the file and its DV removed. */
  async function compact(id: TableIdentifier, recordCount: bigint, rows: Row[], mode: 'append-only' | 'append' = 'append-only'): Promise<void> {
    const t = await loadCatalogTable(w.catalog, id);
    const entries = [];
    for (const m of await readSnapshotManifests(t.io, currentSnapshot(t.metadata)!)) entries.push(...(await readManifestEntries(t.io, m)));
    const dataFile = entries.find((e) => e.status !== 'deleted' && e.dataFile.content === 'data' && e.dataFile.recordCount === recordCount)!.dataFile;
    const dvs = entries.filter((e) => e.status !== 'deleted' && e.dataFile.referencedDataFile === dataFile.filePath).map((e) => e.dataFile);
    const rewriter = new TableChangeWriter(t, { mode });
    await rewriter.applyAll(rows.map((r) => insert(r)));
    const rewritten = await rewriter.prepare();
    await commitSnapshot(t, { operation: 'replace', addedDataFiles: rewritten.dataFiles, removedFiles: [dataFile, ...dvs] }, { summary: { engine: 'compaction' } });
  }

  /** The names of the table's rows (floe's reader), and that no Puffin file under data/ is unreferenced. */
  async function namesAndPuffins(id: TableIdentifier): Promise<{ names: string[]; unreferencedPuffins: string[] }> {
    const t = await loadCatalogTable(w.catalog, id);
    const referenced = new Set<string>();
    for (const snap of t.metadata.snapshots) for (const m of await readSnapshotManifests(t.io, snap)) for (const e of await readManifestEntries(t.io, m)) referenced.add(e.dataFile.filePath);
    const dir = localPath(`${t.metadata.location}/data`);
    const puffins = fs.readdirSync(dir).filter((f) => f.endsWith('.puffin')).map((f) => `${t.metadata.location}/data/${f}`);
    return { names: (await lakeTableRows(w.catalog, id)).rows.map((r) => r.split('|')[2]).sort(), unreferencedPuffins: puffins.filter((p) => !referenced.has(p)) };
  }

  it('v3 deletion-vector upserts: no equality delete; a compaction by another writer of a file the checkpoint deletes from — the deletes are located again in the compacted table', async () => {
    const id = await table(3);
    const c = new TableCommitter({ identifier: id, catalog: w.catalog, jobId: 'job-dv' });
    await c.open();
    await c.write([insert(row(1n, 1, 'a')), insert(row(2n, 1, 'b')), insert(row(3n, 1, 'c'))]);
    await c.commit(1n, '{"p":1}');
    await c.write([update(row(2n, 1, 'b2'))]);
    const second = (await c.commit(2n, '{"p":2}')).snapshot!;
    expect(second.summary['added-dvs']).toBe('1');
    expect(second.summary['added-equality-delete-files']).toBeUndefined();

    // the next checkpoint deletes a row of the first data file (located through the key index) …
    await c.write([update(row(1n, 1, 'a2'))]);
    // … while another writer compacts that file away: its live rows (a, c) rewritten to a new file
    await compact(id, 3n, [row(1n, 1, 'a'), row(3n, 1, 'c')]);
    const third = await c.commit(3n, '{"p":3}');
    expect(third.status).toBe('committed');
    expect(third.snapshot!.summary['added-equality-delete-files']).toBeUndefined();
    expect(await namesAndPuffins(id)).toEqual({ names: ['"a2"', '"b2"', '"c"'], unreferencedPuffins: [] });
    // and the committer goes on: the rebuilt index follows
    await c.write([update(row(3n, 1, 'c2')), removeKey([2n])]);
    expect((await c.commit(4n, '{"p":4}')).status).toBe('committed');
    expect((await namesAndPuffins(id)).names).toEqual(['"a2"', '"c2"']);
  });

  it('v3 keyless: a delete of one copy among identical rows is one DV entry; after another writer compacts its file, the copies are located again', async () => {
    const keyless = new Schema(0, keyedSchema().fields.map((f) => ({ ...f, required: false })), []);
    const id = (await newTable(w, { formatVersion: 3, schema: keyless })).identifier;
    const c = new TableCommitter({ identifier: id, catalog: w.catalog, jobId: 'job-kl' });
    await c.open();
    const a = row(1n, 1, 'a');
    await c.write([insert(a), insert(a), insert(a), insert(row(2n, 1, 'b'))]);
    await c.commit(1n, '{"p":1}');
    await c.write([remove(a)]);
    const second = (await c.commit(2n, '{"p":2}')).snapshot!;
    expect(second.summary['added-dvs']).toBe('1');
    expect((await namesAndPuffins(id)).names).toEqual(['"a"', '"a"', '"b"']);

    // the next checkpoint deletes another copy and updates b, while another writer compacts the
    // file away (its live rows a, a, b rewritten): both are located again in the compacted file
    await c.write([remove(a), update(row(2n, 1, 'b2'), row(2n, 1, 'b'))]);
    await compact(id, 4n, [a, a, row(2n, 1, 'b')], 'append');
    expect((await c.commit(3n, '{"p":3}')).status).toBe('committed');
    expect(await namesAndPuffins(id)).toEqual({ names: ['"a"', '"b2"'], unreferencedPuffins: [] });
    // and the committer goes on with an index built from the compacted table
    await c.write([remove(a)]);
    expect((await c.commit(4n, '{"p":4}')).status).toBe('committed');
    expect((await namesAndPuffins(id)).names).toEqual(['"b2"']);
    const t = await loadCatalogTable(w.catalog, id);
    expect(t.metadata.snapshots.map((x) => x.summary['added-equality-delete-files'] ?? '0')).toEqual(t.metadata.snapshots.map(() => '0'));
  });

  it('v3 keyed cascade child: the rows a parent delete removes are located again after another writer compacts their file', async () => {
    const id = await table(3);
    const c = new TableCommitter({ identifier: id, catalog: w.catalog, jobId: 'job-kc2' });
    await c.open({ mode: 'upsert', matchFields: [['grp']] });
    await c.write([insert(row(1n, 1, 'a')), insert(row(2n, 1, 'b')), insert(row(3n, 2, 'c'))]);
    await c.commit(1n, '{"p":1}');
    await c.write([{ op: 'delete-matching', fields: ['grp'], row: [null, 1, null, null, null] }]);
    await compact(id, 3n, [row(1n, 1, 'a'), row(2n, 1, 'b'), row(3n, 2, 'c')]);
    expect((await c.commit(2n, '{"p":2}')).status).toBe('committed');
    expect(await namesAndPuffins(id)).toEqual({ names: ['"c"'], unreferencedPuffins: [] });
    expect(await addedDeleteFiles(await loadCatalogTable(w.catalog, id))).toEqual({ equality: 0, dvs: 1 });
  });

  it('v3 keyless cascade child: the rows a parent delete removes (FK index) are located again, copy by copy, after another writer compacts their file', async () => {
    const keyless = new Schema(0, keyedSchema().fields.map((f) => ({ ...f, required: false })), []);
    const id = (await newTable(w, { formatVersion: 3, schema: keyless })).identifier;
    const c = new TableCommitter({ identifier: id, catalog: w.catalog, jobId: 'job-kc' });
    // grp is the foreign key: the writer indexes rows by it (pipeline/cascade.ts matchFieldsFor)
    await c.open({ mode: 'append', matchFields: [['grp']] });
    const a1 = row(1n, 1, 'a');
    // two identical children of parent 1, another child of it, and children of parent 2 — one of
    // them identical to a1 but for its parent
    await c.write([insert(a1), insert(a1), insert(row(2n, 1, 'b')), insert(row(3n, 2, 'c')), insert(row(1n, 2, 'a'))]);
    await c.commit(1n, '{"p":1}');

    // parent 1 deleted (ON DELETE CASCADE: a matching delete on grp) while another writer compacts
    // the file: the three children are located again in the compacted file, each copy once
    await c.write([{ op: 'delete-matching', fields: ['grp'], row: [null, 1, null, null, null] }]);
    await compact(id, 5n, [a1, a1, row(2n, 1, 'b'), row(3n, 2, 'c'), row(1n, 2, 'a')], 'append');
    const third = await c.commit(2n, '{"p":2}');
    expect(third.status).toBe('committed');
    expect(await namesAndPuffins(id)).toEqual({ names: ['"a"', '"c"'], unreferencedPuffins: [] });
    const t = await loadCatalogTable(w.catalog, id);
    expect(await addedDeleteFiles(t)).toEqual({ equality: 0, dvs: 1 });
    expect((await lakeTableRows(w.catalog, id)).rows.map((r) => r.split('|').slice(0, 2).join('|')).sort()).toEqual(['L1|N2', 'L3|N2']); // (id, grp): the children of parent 2
  });

  it('v3: a commit retried on top of another writer\'s compaction of an untouched file leaves no stale key index behind', async () => {
    const id = await table(3);
    const c0 = new TableCommitter({ identifier: id, catalog: w.catalog, jobId: 'job-dv2' });
    await c0.open();
    await c0.write([insert(row(1n, 1, 'a')), insert(row(2n, 1, 'b'))]);
    await c0.commit(1n, '{"p":1}');
    await c0.write([insert(row(3n, 1, 'c')), insert(row(4n, 1, 'd')), insert(row(5n, 1, 'e'))]);
    await c0.commit(2n, '{"p":2}');
    // checkpoint 3 deletes from the second file; just before its commit request lands, another writer
    // compacts the first file (not one of checkpoint 3's targets): the commit is retried on top of it
    let raced = false;
    const hooked = new Proxy(w.catalog, {
      get(target, prop, receiver) {
        if (prop === 'commitTable') {
          return async (...args: Parameters<typeof target.commitTable>) => {
            if (raced === false && args[1].some((r) => r.type === 'assert-ref-snapshot-id')) {
              raced = true;
              await compact(id, 2n, [row(1n, 1, 'a'), row(2n, 1, 'b')]);
            }
            return target.commitTable(...args);
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    });
    const c = new TableCommitter({ identifier: id, catalog: hooked, jobId: 'job-dv2', retry: { minWaitMs: 1, maxWaitMs: 2 } });
    await c.open();
    await c.write([update(row(3n, 1, 'c2'))]);
    expect((await c.commit(3n, '{"p":3}')).status).toBe('committed');
    expect(raced).toBe(true);
    const t = await loadCatalogTable(w.catalog, id);
    expect(currentSnapshot(t.metadata)!.parentSnapshotId).toBe(t.metadata.snapshots.find((s) => s.summary.engine === 'compaction')!.snapshotId);
    // checkpoint 4 deletes a row of the compacted file: through an index of the table as it is
    await c.write([update(row(1n, 1, 'a2'))]);
    expect((await c.commit(4n, '{"p":4}')).status).toBe('committed');
    expect(await namesAndPuffins(id)).toEqual({ names: ['"a2"', '"b"', '"c2"', '"d"', '"e"'], unreferencedPuffins: [] });
  });

  it('v3: a table with more rows than keyIndexMaxRows upserts with equality deletes, and says so', async () => {
    const id = await table(3);
    const warnings: string[] = [];
    const c = new TableCommitter({ identifier: id, catalog: w.catalog, jobId: 'job-big', keyIndexMaxRows: 5, warn: (m) => warnings.push(m) });
    await c.open();
    await c.write(Array.from({ length: 10 }, (_, i) => insert(row(BigInt(i), 1, `r${i}`))));
    await c.commit(1n, '{}');
    await c.write([update(row(3n, 1, 'r3b'))]);
    const snap = (await c.commit(2n, '{}')).snapshot!;
    expect(snap.summary['added-equality-delete-files']).toBe('1');
    expect(warnings.join('\n')).toMatch(/holds 10 records, more than iceberg.keyIndexMaxRows \(5\).*equality deletes instead of deletion vectors/);
    expect((await lakeTableRows(w.catalog, id)).rows.filter((r) => r.includes('"r3b"'))).toHaveLength(1);
  });

  it('skips a checkpoint the table already holds, and deletes the files written for it', async () => {
    const id = await table();
    const first = new TableCommitter({ identifier: id, catalog: w.catalog, jobId: 'job-b' });
    await first.write(insert(row(1n, 1, 'a')));
    await first.commit(7n, '"o7"');
    const snapshots = (await loadCatalogTable(w.catalog, id)).metadata.snapshots.length;

    // A restarted process re-delivers checkpoint 7 (and an older one).
    for (const cp of [7n, 5n]) {
      // Tiny files: every row is written to storage at once, so dropping the checkpoint has files to delete.
      const again = new TableCommitter({ identifier: id, catalog: w.catalog, jobId: 'job-b', writer: { targetFileSizeBytes: 1, sizeCheckRows: 1 } });
      expect(await again.open()).toMatchObject({ checkpointId: 7n, sourceOffset: '"o7"' });
      await again.write([insert(row(1n, 1, 'a')), insert(row(9n, 1, 'not in checkpoint 7'))]);
      const out = await again.commit(cp, '"replayed"');
      expect(out.status).toBe('already-committed');
    }
    const after = await loadCatalogTable(w.catalog, id);
    expect(after.metadata.snapshots.length).toBe(snapshots);
    // Only the committed data file is left under data/.
    const dataDir = localPath(`${after.metadata.location}/data`);
    expect(fs.readdirSync(dataDir).filter((f) => /^\d{5}-.*\.parquet$/.test(f))).toHaveLength(1);
    expect(sortedNames(await icebirdRows(after.metadata.location))).toEqual([[1n, 'a']]);
  });

  it('validates again after a conflict: another process of the job committing the same checkpoint first wins', async () => {
    const id = await table();
    const a = new TableCommitter({ identifier: id, catalog: w.catalog, jobId: 'job-c' });
    // b's catalog lets a commit checkpoint 3 just before b's first commit request: b has passed its
    // pre-check, loses the race, reloads, and its validate callback must see checkpoint 3 and skip.
    let raced = false;
    const hooked = new Proxy(w.catalog, {
      get(target, prop, receiver) {
        if (prop === 'commitTable') {
          return async (...args: Parameters<typeof target.commitTable>) => {
            if (!raced) {
              raced = true;
              await a.write(insert(row(1n, 1, 'from a')));
              expect((await a.commit(3n, '"a"')).status).toBe('committed');
            }
            return target.commitTable(...args);
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    });
    const b = new TableCommitter({ identifier: id, catalog: hooked, jobId: 'job-c', retry: { minWaitMs: 1, maxWaitMs: 2 } });
    await a.open();
    await b.write(insert(row(1n, 1, 'from b')));
    const rb = await b.commit(3n, '"b"');
    expect(raced).toBe(true);
    expect(rb.status).toBe('already-committed');
    const t = await loadCatalogTable(w.catalog, id);
    expect(t.metadata.snapshots.map((s) => s.summary['floe.checkpoint-id'])).toEqual(['3']);
    expect(sortedNames(await icebirdRows(t.metadata.location))).toEqual([[1n, 'from a']]);
  });

  it('commits a stamps-only snapshot when asked with nothing buffered, and nothing when not asked (when: the coordinator, pipeline/checkpoint.ts)', async () => {
    const busy = await table();
    const idle = await table();
    const b = new TableCommitter({ identifier: busy, catalog: w.catalog, jobId: 'job-d' });
    const i = new TableCommitter({ identifier: idle, catalog: w.catalog, jobId: 'job-d' });
    await b.open();
    await i.open();
    for (let cp = 1n; cp <= 6n; cp++) {
      await b.write(insert(row(cp, 1, `r${cp}`)));
      expect((await b.commit(cp, `{"pos":${cp}}`)).status).toBe('committed');
    }
    expect(i.bufferedChanges).toBe(0);
    expect(await i.lastCommitted()).toBeUndefined();
    const forced = [await b.commit(7n, '{"pos":7}'), await i.commit(7n, '{"pos":7}')];
    expect(forced.map((t) => t.status)).toEqual(['committed', 'committed']);
    expect(await i.lastCommitted()).toMatchObject({ checkpointId: 7n, sourceOffset: '{"pos":7}' });
    const t = await loadCatalogTable(w.catalog, idle);
    const summary = currentSnapshot(t.metadata)!.summary;
    expect(summary).toMatchObject({ operation: 'append', 'floe.checkpoint-id': '7', 'total-records': '0' });
    expect(summary['added-data-files']).toBeUndefined();
  });

  it('refuses further use after a failed commit (restart as after a crash)', async () => {
    const id = await table();
    const c = new TableCommitter({ identifier: id, catalog: w.catalog, jobId: 'job-e' });
    await c.write(insert(row(1n, 1, 'a')));
    armFailpoint('after-manifests');
    await expect(c.commit(1n, '"x"')).rejects.toThrow(/failpoint after-manifests/);
    await expect(c.write(insert(row(2n, 1, 'b')))).rejects.toThrow(/failed earlier/);
  });
});
