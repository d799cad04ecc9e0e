/**
 * The DV writer's key index survives a manifest rewrite (maintenance/rewrite-manifests.ts): the
 * rewrite moves no row, so the committer keeps the index instead of rebuilding it (a read of every
 * data file's keys) — counted through buildKeyIndex — and its upserts after the rewrite still hit the
 * right rows. A compaction-like `replace` that does change files is not taken for one.
 */
import { describe, expect, it, vi } from 'vitest';

const built = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../../src/iceberg/keyindex/key-index-build.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../src/iceberg/keyindex/key-index-build.js')>();
  return {
    ...original,
    buildKeyIndex: async (...args: Parameters<typeof original.buildKeyIndex>) => {
      built.count++;
      return original.buildKeyIndex(...args);
    },
  };
});

import { rewriteManifests } from '../../../src/iceberg/maintenance/rewrite-manifests.js';
import { currentSnapshot } from '../../../src/iceberg/spec/snapshot-ids.js';
import type { TableMetadata } from '../../../src/iceberg/spec/table-metadata.js';
import { loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { indexStillMatches } from '../../../src/iceberg/keyindex/key-index.js';
import { TableCommitter } from '../../../src/iceberg/checkpoint/index.js';
import { insert, removeKey, update } from '../../../src/iceberg/writer/index.js';
import type { Row } from '../../../src/model/values.js';
import { lakeTableRows } from '../../e2e/support/lake-compare.js';
import { newTable, useTempWarehouse } from '../writer/support.js';

const w = useTempWarehouse('floe-index-follow-');

const enc = new TextEncoder();
const row = (id: bigint, name: string): Row => [id, 1, name, '1.00', enc.encode(name)];

describe('key index across a manifest rewrite', () => {
  it('is kept, not rebuilt, and the upserts after it delete the right rows', async () => {
    const t0 = await newTable(w, { formatVersion: 3, properties: { 'commit.manifest-merge.enabled': 'false' } });
    const c = new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId: 'job-f' });
    await c.open();
    await c.write(Array.from({ length: 30 }, (_, i) => insert(row(BigInt(i), `r${i}`))));
    await c.commit(1n, '{}');
    for (let k = 2; k <= 8; k++) {
      await c.write([update(row(BigInt(k), `u${k}`))]);
      await c.commit(BigInt(k), '{}');
    }
    const beforeRewrite = built.count;
    expect(beforeRewrite).toBe(1); // built once, then followed floe's own commits

    const r = await rewriteManifests(await loadCatalogTable(w.catalog, t0.identifier), { minManifests: 2 });
    expect(r.skipped).toBeUndefined();
    for (let k = 9; k <= 11; k++) {
      await c.write([update(row(BigInt(k), `after${k}`)), removeKey([BigInt(k + 10)])]);
      await c.commit(BigInt(k), '{}');
    }
    expect(built.count).toBe(beforeRewrite);
    const rows = (await lakeTableRows(w.catalog, t0.identifier)).rows;
    expect(rows.length).toBe(27);
    for (let k = 9; k <= 11; k++) {
      expect(rows.filter((x) => x.startsWith(`N${k}|`) || x.startsWith(`${k}|`)).length).toBeLessThanOrEqual(1);
      expect(rows.some((x) => x.includes(`"after${k}"`))).toBe(true);
    }
    const t = await loadCatalogTable(w.catalog, t0.identifier);
    expect(currentSnapshot(t.metadata)!.summary['total-equality-deletes']).toBe('0');
  });

  it('does not take a replace that changed files for a manifest rewrite', () => {
    const snap = (id: bigint, parent: bigint | undefined, summary: Record<string, string>) => ({ snapshotId: id, ...(parent !== undefined ? { parentSnapshotId: parent } : {}), sequenceNumber: id, timestampMs: id, manifestList: `m${id}`, summary });
    const metadata = {
      snapshots: [
        snap(1n, undefined, { operation: 'append', 'added-data-files': '1' }),
        snap(2n, 1n, { operation: 'replace', 'manifests-replaced': '4', 'manifests-created': '1' }),
        snap(3n, 2n, { operation: 'replace', 'added-data-files': '1', 'deleted-data-files': '3' }),
        snap(4n, 3n, { operation: 'replace', 'manifests-replaced': '2' }),
      ],
    } as unknown as TableMetadata;
    expect(indexStillMatches(metadata, 1n, 2n)).toBe(true);
    expect(indexStillMatches(metadata, 1n, 1n)).toBe(true);
    expect(indexStillMatches(metadata, 1n, 3n)).toBe(false); // a compaction moved rows
    expect(indexStillMatches(metadata, 3n, 4n)).toBe(true);
    expect(indexStillMatches(metadata, 2n, 1n)).toBe(false); // not a descendant
    expect(indexStillMatches(metadata, 9n, 4n)).toBe(false); // expired: unknown
  });
});
