/**
 * The storage part of `floe check`: write, read back, list and delete a probe object under the
 * warehouse, and — for the filesystem catalog, whose commits depend on it — whether the store
 * creates objects atomically (create-if-absent; docs/design.md §7).
 */
import { randomUUID } from 'node:crypto';
import type { FloeConfig } from '../../config/schema.js';
import { fileIOFor, storageSchemeOf } from '../../io/file-io-factory.js';
import type { FileIO } from '../../io/file-io.js';
import { normalizeWarehouse } from '../../catalog/filesystem/filesystem-layout.js';
import { errorMessage } from '../../util/errors.js';
import { storageConfig } from '../../pipeline/config-options.js';
import type { CheckLine } from './check-line.js';

export async function storageChecks(config: FloeConfig): Promise<CheckLine[]> {
  const lines: CheckLine[] = [];
  const fail = (check: string, message: string): CheckLine[] => {
    lines.push({ check, ok: false, severity: 'error', message });
    return lines;
  };
  let warehouse: string;
  let io: FileIO;
  try {
    storageSchemeOf(config.warehouse.location);
    warehouse = normalizeWarehouse(config.warehouse.location);
    io = fileIOFor(warehouse, storageConfig(config.warehouse));
  } catch (e) {
    return fail('storage.location', `warehouse.location ${JSON.stringify(config.warehouse.location)}: ${errorMessage(e)}`);
  }
  try {
    // At the warehouse root, not in a directory of its own: deleting it leaves nothing behind.
    const probe = `${warehouse}/.floe-check-${randomUUID()}`;
    const payload = new TextEncoder().encode(`floe check ${new Date().toISOString()}\n`);
    try {
      await io.write(probe, payload);
      lines.push({ check: 'storage.write', ok: true, severity: 'error', message: `wrote a probe object under ${warehouse}` });
    } catch (e) {
      return fail('storage.write', `cannot write under ${warehouse}: ${errorMessage(e)}; check the path or bucket, the credentials and their write permission`);
    }
    try {
      const back = await io.read(probe);
      if (Buffer.compare(Buffer.from(back), Buffer.from(payload)) !== 0) {
        fail('storage.read', `read back ${back.length} bytes from the probe object, expected the ${payload.length} written: the store does not return what it stores`);
      } else lines.push({ check: 'storage.read', ok: true, severity: 'error', message: 'read the probe object back' });
    } catch (e) {
      fail('storage.read', `cannot read the probe object back: ${errorMessage(e)}; check read permission`);
    }
    try {
      await io.delete(probe);
      if (await io.exists(probe)) fail('storage.delete', 'the probe object still exists after delete; floe needs to remove files of failed commits and expired snapshots');
      else lines.push({ check: 'storage.delete', ok: true, severity: 'error', message: 'deleted the probe object' });
    } catch (e) {
      fail('storage.delete', `cannot delete the probe object ${probe}: ${errorMessage(e)}; check delete permission`);
    }
    if (config.catalog.type === 'filesystem') {
      try {
        const atomic = await io.supportsAtomicCreate(warehouse);
        lines.push(
          atomic
            ? { check: 'storage.atomic-create', ok: true, severity: 'error', message: 'create-if-absent is atomic here: the filesystem catalog can commit safely' }
            : { check: 'storage.atomic-create', ok: false, severity: 'error', message: `this store ignores create-if-absent (If-None-Match: *), so concurrent filesystem-catalog commits could overwrite each other; use catalog.type sql or rest for ${warehouse}` },
        );
      } catch (e) {
        fail('storage.atomic-create', `cannot probe atomic creates under ${warehouse}: ${errorMessage(e)}`);
      }
    }
    return lines;
  } finally {
    // the check's verdict is already made; a failed close of its probe client changes nothing
    await io.close?.().catch(() => undefined);
  }
}
