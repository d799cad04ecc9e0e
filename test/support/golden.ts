/**
 * Where the golden Iceberg tables (shared/fixtures/iceberg-golden: written by Spark/Java, with the
 * rows they must read as) live. They are project data beside the repository, not part of it:
 * `FLOE_GOLDEN_DIR` when set (and then only there), else `<repo>/../shared/fixtures/iceberg-golden`,
 * else `/work/shared/fixtures/iceberg-golden`. When none is found the golden tests FAIL (a missing
 * fixture must not pass as a green run), unless `FLOE_GOLDEN_OPTIONAL=1` says to skip them.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function locate(): string | undefined {
  const given = process.env.FLOE_GOLDEN_DIR;
  const candidates = given ? [given] : [path.resolve(REPO, '../shared/fixtures/iceberg-golden'), '/work/shared/fixtures/iceberg-golden'];
  return candidates.find((c): c is string => !!c && existsSync(path.join(c, 'expected.json')));
}

const found = locate();
const optional = process.env.FLOE_GOLDEN_OPTIONAL === '1';
if (!found) {
  const where = process.env.FLOE_GOLDEN_DIR ?? 'shared/fixtures/iceberg-golden beside the repository or in /work';
  if (optional) console.warn(`golden fixtures not found in ${where}: golden tests are skipped (FLOE_GOLDEN_OPTIONAL=1)`);
  else console.error(`golden fixtures not found in ${where}: golden tests fail; set FLOE_GOLDEN_DIR to shared/fixtures/iceberg-golden, or FLOE_GOLDEN_OPTIONAL=1 to skip them`);
}

/** The fixtures folder; when absent, a path that names the fix (the golden tests then fail reading it). */
export const GOLDEN_DIR: string = found ?? '/golden-fixtures-not-found--set-FLOE_GOLDEN_DIR/iceberg-golden';
/** Whether the golden tests run: always, unless the fixtures are absent and FLOE_GOLDEN_OPTIONAL=1. */
export const goldenAvailable = found !== undefined || !optional;
