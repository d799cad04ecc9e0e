/**
 * The upsert model test in deletion-vector mode, read by other engines: random change streams
 * (inserts, updates with partition moves and key changes, deletes, duplicate deliveries) cut into
 * random checkpoints on a partitioned format-v3 table, with the key index on disk (a budget of 10 rows
 * in memory) and restarts at random checkpoints — the index kept, deleted, or overwritten with
 * garbage. After every commit floe's reader equals the reference model; every few commits and at the
 * end PyIceberg and DuckDB read exactly floe scan's rows. No equality delete is ever written.
 */
import { rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { TableCommitter } from '../../src/iceberg/checkpoint/index.js';
import { applyToModel, auditTable, cutCheckpoints, expectTableEquals, generateChanges, type Model } from '../iceberg/writer/change-stream.js';
import { BY_GROUP, localPath, newTable, prng, tempWarehouse, type Warehouse } from '../iceberg/writer/support.js';
import { ENGINES_HOME, engineSuite, floeScanLines, readWith, sortLines } from './support/engines.js';

const READERS = ['pyiceberg', 'duckdb'] as const;
const { missing, required } = engineSuite('test/engines/upsert-model', READERS);
const SEEDS = [4242, 5151];
const KINDS = ['kept', 'deleted', 'corrupted'] as const;

let w: Warehouse;
let stateRoot: string;

describe.skipIf(missing.length > 0 && !required)('upsert model in deletion-vector mode with restarts, read by PyIceberg and DuckDB', () => {
  beforeAll(async () => {
    if (missing.length > 0) throw new Error(`FLOE_ENGINES_REQUIRED=1 but ${missing.join(', ')} not installed in ${ENGINES_HOME}: run npm run engines:install`);
    w = await tempWarehouse('floe-upsert-engines-');
    stateRoot = mkdtempSync(join(tmpdir(), 'floe-upsert-state-'));
  });
  afterAll(() => {
    w?.remove();
    if (stateRoot) rmSync(stateRoot, { recursive: true, force: true });
  });

  for (const seed of SEEDS) {
    it(`seed ${seed}: the table equals the model after every commit; the engines read it as floe does`, async () => {
      const rand = prng(seed);
      const created = await newTable(w, { formatVersion: 3, spec: BY_GROUP });
      const id = created.identifier;
      const stateDir = join(stateRoot, String(seed));
      const jobId = `model-${seed}`;
      const open = () => new TableCommitter({ identifier: id, catalog: w.catalog, jobId, writer: { targetFileSizeBytes: 4096, sizeCheckRows: 25 }, keyIndex: { stateDir, memoryMaxRows: 10 } });
      const indexFile = () => join(stateDir, jobId, `${created.metadata.tableUuid}.keyindex.sqlite`);
      let committer = open();
      await committer.open();
      const checkpoints = cutCheckpoints(rand, generateChanges(rand, 700, 200), 120);
      const model: Model = new Map();
      const restarts = { kept: 0, deleted: 0, corrupted: 0 };
      const loads: (typeof committer.keyIndexLoads)[] = [];
      let cp = 0n;
      const dir = localPath(created.metadata.location);
      const engineCheck = async (what: string) => {
        const expected = sortLines(await floeScanLines(dir));
        for (const engine of READERS) {
          const read = await readWith(engine, dir);
          expect({ engine, what, code: read.code, stderr: read.code === 0 ? '' : read.stderr.slice(-800) }).toEqual({ engine, what, code: 0, stderr: '' });
          expect(sortLines(read.lines), `${engine} ${what}`).toEqual(expected);
        }
      };
      for (const batch of checkpoints) {
        if (cp > 0n && rand() < 0.5) {
          // a restart: nothing in memory; the index on disk kept, gone, or damaged (in turn)
          loads.push(committer.keyIndexLoads);
          const kind = KINDS[(restarts.kept + restarts.deleted + restarts.corrupted) % KINDS.length]!;
          if (kind === 'deleted') for (const suffix of ['', '-wal', '-shm']) rmSync(indexFile() + suffix, { force: true });
          if (kind === 'corrupted') {
            for (const suffix of ['-wal', '-shm']) rmSync(indexFile() + suffix, { force: true });
            writeFileSync(indexFile(), Buffer.from(`not a database ${seed} ${cp}`.repeat(200)));
          }
          restarts[kind]++;
          committer = open();
          await committer.open();
        }
        await committer.write(batch);
        for (const change of batch) applyToModel(model, change);
        const out = await committer.commit(++cp, JSON.stringify({ pos: Number(cp) }));
        expect(out.status).toBe('committed');
        await expectTableEquals(await loadCatalogTable(w.catalog, id), model, `after checkpoint ${cp}`);
        if (cp % 4n === 0n) await engineCheck(`after checkpoint ${cp}`);
      }
      await engineCheck('at the end');
      const table = await loadCatalogTable(w.catalog, id);
      const audit = await auditTable(table, jobId);
      expect(audit.checkpointIds).toEqual(checkpoints.map((_, i) => String(i + 1)));
      const eqDeletes = table.metadata.snapshots.reduce((n, s) => n + Number(s.summary['added-equality-delete-files'] ?? '0'), 0);
      expect(eqDeletes, 'deletion-vector mode writes no equality delete').toBe(0);
      expect(model.size).toBeGreaterThan(40);
      loads.push(committer.keyIndexLoads);
      const total = loads.reduce((a, l) => ({ reused: a.reused + l.reused + l.replayed, rebuilt: a.rebuilt + l.builtOnDisk + l.built }), { reused: 0, rebuilt: 0 });
      console.log(`seed ${seed}: ${checkpoints.length} checkpoints, restarts ${JSON.stringify(restarts)}, index ${JSON.stringify(total)}`);
      expect(Math.min(restarts.kept, restarts.deleted, restarts.corrupted), JSON.stringify(restarts)).toBeGreaterThan(0);
      // a kept index is used again; a deleted or damaged one is rebuilt from the lake
      expect(total.reused).toBeGreaterThanOrEqual(restarts.kept);
      expect(total.rebuilt).toBeGreaterThanOrEqual(restarts.deleted + restarts.corrupted);
    });
  }
});
