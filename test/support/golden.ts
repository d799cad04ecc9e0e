/**
 * Where the golden Iceberg tables (shared/fixtures/iceberg-golden: written by Spark/Java, with the
 * rows they must read as) live. They are project data beside the repository, not part of it:
 * `FLOE_GOLDEN_DIR`, else `<repo>/../shared/fixtures/iceberg-golden`, else
 * `/work/shared/fixtures/iceberg-golden`. Tests that need them skip, saying so, when none exists.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function locate(): string | undefined {
  const candidates = [
    process.env.FLOE_GOLDEN_DIR,
    path.resolve(REPO, '../shared/fixtures/iceberg-golden'),
    '/work/shared/fixtures/iceberg-golden',
  ];
  return candidates.find((c): c is string => !!c && existsSync(path.join(c, 'expected.json')));
}

const found = locate();
if (!found) console.warn('golden fixtures not found (set FLOE_GOLDEN_DIR to shared/fixtures/iceberg-golden): golden tests are skipped');

/** The fixtures folder, or a non-existent placeholder when absent (tests check `goldenAvailable`). */
export const GOLDEN_DIR: string = found ?? '/nonexistent/iceberg-golden';
export const goldenAvailable = found !== undefined;
