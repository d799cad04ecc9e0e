/**
 * MetadataFileCache: a metadata file the catalog wrote or read is not parsed again while its bytes
 * are unchanged; any other file, or the same file with other bytes, is.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetadataFileCache } from '../../src/catalog/metadata-file-cache.js';
import { LocalFileIO } from '../../src/io/local-file-io.js';
import { writeTableMetadata } from '../../src/iceberg/spec/table-metadata-json.js';
import type { TableMetadata } from '../../src/iceberg/spec/table-metadata.js';
import { appendSnapshotCommit, testSchema } from './test-snapshots.js';
import { applyUpdates, newTableMetadata } from '../../src/iceberg/metadata/metadata-builder.js';

describe('MetadataFileCache', () => {
  let dir: string;
  const io = new LocalFileIO();
  const bytesOf = (m: TableMetadata) => new TextEncoder().encode(writeTableMetadata(m));
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'floe-metadata-cache-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the file it wrote or read while the bytes are the same, and parses anything else', async () => {
    const base = newTableMetadata({ location: `file://${dir}/t`, schema: testSchema() });
    const c = appendSnapshotCommit(base);
    const next = applyUpdates(base, c.updates);
    const v1 = `file://${dir}/t/metadata/v1.metadata.json`;
    const v2 = `file://${dir}/t/metadata/v2.metadata.json`;
    await io.write(v1, bytesOf(base));
    const written = bytesOf(next);
    await io.write(v2, written);
    const cache = new MetadataFileCache();
    cache.wrote('t', v2, written, next);
    expect(await cache.read(io, 't', v2)).toBe(next);

    // another location: parsed, and cached in turn
    const first = await cache.read(io, 't', v1);
    expect(first).not.toBe(base);
    expect(first).toEqual(base);
    expect(await cache.read(io, 't', v1)).toBe(first);

    // the same location with other bytes: parsed
    const changed = { ...base, properties: { ...base.properties, changed: 'yes' } };
    await io.write(v1, bytesOf(changed));
    const reread = await cache.read(io, 't', v1);
    expect(reread).not.toBe(first);
    expect(reread.properties.changed).toBe('yes');

    // one file a table: another table's file does not displace it
    cache.wrote('u', v2, written, next);
    expect(await cache.read(io, 't', v1)).toBe(reread);
    cache.forget('t');
    expect(await cache.read(io, 't', v1)).not.toBe(reread);
  });
});
