/**
 * Property test of the key index (memory-key-index.ts, kept by key-index-lifecycle.ts, persisted by
 * index-store.ts) against a plain Map: random sequences of upserts and deletes (single keys, and
 * bulk inserts of ascending keys, which the index keeps as sorted runs), floe's compaction (followed
 * by the index), and restarts — clean (the index saved), crashed (no clean stop; sometimes its log's
 * last record torn, sometimes killed between a commit landing and the index following it) and with
 * the state directory lost (the index built from the lake, its key column decoded in a worker).
 * After every step the table read back equals the model, and the index the committer holds answers
 * for every key ever used exactly where the lake has that key's live row (read independently, with
 * the scan reader's positions), or nothing when it has none.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TableCommitter } from '../../../src/iceberg/checkpoint/index.js';
import type { KeyIndex } from '../../../src/iceberg/keyindex/key-index.js';
import { workerKeyColumnReader } from '../../../src/iceberg/keyindex/worker-key-column.js';
import { rewriteDataFiles } from '../../../src/iceberg/maintenance/rewrite-data-files.js';
import { DeleteLoader } from '../../../src/iceberg/scan/delete-loader.js';
import { readTableRows } from '../../../src/iceberg/scan/index.js';
import { planScan } from '../../../src/iceberg/scan/scan-plan.js';
import { readTaskPositions } from '../../../src/iceberg/scan/task-reader.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { loadCatalogTable, type CatalogTable } from '../../../src/iceberg/table/index.js';
import { insert, removeKey, update, type RowChange } from '../../../src/iceberg/writer/index.js';
import { armFailpoint, disarmFailpoints } from '../../../src/util/failpoints.js';
import type { Row } from '../../../src/model/values.js';
import { newTable, tempWarehouse, type Warehouse } from '../writer/support.js';

let w: Warehouse;
let stateRoot: string;
beforeAll(async () => {
  w = await tempWarehouse('floe-keyindex-model-');
  stateRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'floe-keyindex-model-state-'));
});
afterAll(() => {
  w.remove();
  fs.rmSync(stateRoot, { recursive: true, force: true });
});
afterEach(() => disarmFailpoints());

const JOB = 'job-model';
const KEYS = 120;

type Op =
  | { kind: 'changes'; changes: { key: number; del: boolean }[] }
  | { kind: 'bulk'; from: number; count: number }
  | { kind: 'compact' }
  | { kind: 'restart'; how: 'clean' | 'crash' | 'torn' | 'between' | 'lost' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('changes' as const), changes: fc.array(fc.record({ key: fc.integer({ min: 0, max: KEYS - 1 }), del: fc.boolean() }), { minLength: 1, maxLength: 30 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('bulk' as const), from: fc.integer({ min: 0, max: KEYS - 1 }), count: fc.integer({ min: 16, max: 60 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('compact' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('restart' as const), how: fc.constantFrom('clean' as const, 'crash' as const, 'torn' as const, 'between' as const, 'lost' as const) }) },
);

const row = (id: number, name: string): Row => [BigInt(id), 1, name, null, null];

/** Where the lake holds each live key: `file:pos`, read with the scan reader (deletes applied). */
async function lakePlaces(t: CatalogTable): Promise<Map<number, string>> {
  const schema = t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!;
  const plan = await planScan(t.io, t.metadata);
  const keySchema = new Schema(schema.schemaId, [schema.findField(1)!], []);
  const ctx = { io: t.io, schema: keySchema, schemas: t.metadata.schemas, specs: t.metadata.partitionSpecs, loader: new DeleteLoader(t.io, schema, t.metadata.schemas) };
  const out = new Map<number, string>();
  for (const task of plan.tasks) {
    for await (const b of readTaskPositions(task, ctx)) {
      b.rows.forEach((r, i) => {
        const k = Number(r[0] as bigint);
        expect(out.has(k), `key ${k} live twice in the lake`).toBe(false);
        out.set(k, `${task.file.filePath}:${b.positions ? b.positions[i]! : b.firstPosition + i}`);
      });
    }
  }
  return out;
}

interface Session {
  committer: TableCommitter;
  checkpoint: bigint;
}

describe('the key index against a plain Map', () => {
  it('through random upserts, deletes, compactions and restarts (clean, crashed, torn, between commit and index, state lost)', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 4, maxLength: 14 }), async (ops) => {
        const t0 = await newTable(w, { formatVersion: 3, name: `model${++run}` });
        const stateDir = fs.mkdtempSync(path.join(stateRoot, 'run-'));
        const open = (): TableCommitter =>
          new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId: JOB, keyIndex: { stateDir, saveMinRows: 0 }, keyColumnReader: workerKeyColumnReader, writer: { targetFileSizeBytes: 2048, sizeCheckRows: 20 } });
        const model = new Map<number, string>();
        const s: Session = { committer: open(), checkpoint: 0n };
        await s.committer.open();
        const flushed = async (): Promise<void> => {
          await (s.committer as unknown as { keys: { store?: { flush(): Promise<boolean> } } }).keys.store?.flush();
        };
        const commit = async (changes: RowChange[], apply: () => void): Promise<void> => {
          await s.committer.write(changes);
          const out = await s.committer.commit(++s.checkpoint, '{}');
          expect(out.status).toBe('committed');
          apply();
        };
        for (const [step, op] of ops.entries()) {
          const name = `s${step}`;
          if (op.kind === 'changes') {
            const changes: RowChange[] = [];
            const next = new Map(model);
            for (const [i, c] of op.changes.entries()) {
              if (c.del) {
                changes.push(removeKey([BigInt(c.key)]));
                next.delete(c.key);
              } else {
                changes.push(next.has(c.key) ? update(row(c.key, `${name}-${i}`)) : insert(row(c.key, `${name}-${i}`)));
                next.set(c.key, `${name}-${i}`);
              }
            }
            await commit(changes, () => {
              model.clear();
              for (const [k, v] of next) model.set(k, v);
            });
          } else if (op.kind === 'bulk') {
            const keys = Array.from({ length: op.count }, (_, i) => op.from + i);
            await commit(
              keys.map((k) => (model.has(k) ? update(row(k, name)) : insert(row(k, name)))),
              () => keys.forEach((k) => model.set(k, name)),
            );
          } else if (op.kind === 'compact') {
            const table = await loadCatalogTable(w.catalog, t0.identifier);
            const r = await rewriteDataFiles(table, { applyDeletes: true, smallFiles: { minInputFiles: 2, minFileSizeBytes: 1 << 20 } });
            if (r.commit) await s.committer.followMaintenance(r.table, r.commit);
          } else if (op.how === 'between') {
            // killed after the commit landed, before the index followed it: the next start catches up
            armFailpoint('key-index-before-apply', { action: 'throw' });
            await s.committer.write([insert(row(KEYS + step, name))]);
            await expect(s.committer.commit(++s.checkpoint, '{}')).rejects.toThrow(/failpoint key-index-before-apply/);
            disarmFailpoints();
            model.set(KEYS + step, name);
            await flushed();
            s.committer = open();
          } else {
            if (op.how === 'clean') await s.committer.saveKeyIndex();
            else await flushed();
            s.committer.close();
            const log = fs.existsSync(path.join(stateDir, JOB)) ? fs.readdirSync(path.join(stateDir, JOB)).find((f) => f.endsWith('.keyindex.log')) : undefined;
            if (op.how === 'torn' && log) {
              const p = path.join(stateDir, JOB, log);
              const size = fs.statSync(p).size;
              fs.truncateSync(p, Math.max(0, size - 1 - (step % 7)));
            }
            if (op.how === 'lost') fs.rmSync(path.join(stateDir, JOB), { recursive: true, force: true });
            s.committer = open();
          }
          // the table equals the model; the index (loaded now if the committer has none) says where the lake has each key
          const table = await loadCatalogTable(w.catalog, t0.identifier);
          const rows = await readTableRows(table);
          expect(new Map(rows.map((r) => [Number(r[0] as bigint), r[2] as string])), `rows after step ${step} (${op.kind})`).toEqual(model);
          const lifecycle = (s.committer as unknown as { keys: { forWriter(t: CatalogTable, keyless: boolean): Promise<{ keyIndex?: KeyIndex }> } }).keys;
          const { keyIndex } = await lifecycle.forWriter(table, false);
          expect(keyIndex?.snapshotId).toBe(table.metadata.currentSnapshotId);
          const places = await lakePlaces(table);
          for (let k = 0; k < KEYS + ops.length; k++) {
            const at = keyIndex!.get(k);
            expect(at && `${at.file.filePath}:${at.pos}`, `key ${k} after step ${step} (${op.kind}${op.kind === 'restart' ? ` ${op.how}` : ''})`).toBe(places.get(k));
          }
          expect(keyIndex!.size).toBe(places.size);
        }
        s.committer.close();
      }),
      { numRuns: 20, seed: 4242 },
    );
  });
});
