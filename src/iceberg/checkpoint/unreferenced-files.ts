/**
 * Deleting files a checkpoint wrote that no commit can reference (docs/design.md §4: a skipped or
 * replayed checkpoint, DV files replaced when the deletes were located again). Best effort: a file
 * left behind is an orphan (harmless, removed by maintenance), so a failure is only reported. Never
 * used once a commit's outcome was unknown — one of its files may yet be referenced.
 */
import { errorMessage } from '../../util/errors.js';
import type { CatalogTable } from '../table/index.js';

export async function deleteUnreferenced(table: CatalogTable, paths: readonly string[], warn?: (message: string) => void): Promise<void> {
  for (const p of paths) {
    try {
      await table.io.delete(p);
    } catch (e) {
      (warn ?? ((m: string) => process.emitWarning(m, { code: 'FLOE_WRITER' })))(`could not delete unreferenced file ${p}: ${errorMessage(e)}`);
    }
  }
}
