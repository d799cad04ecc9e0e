/**
 * The unit/integration split stays true: no file of the unit project (test/unit-tests.ts) reaches,
 * through its own imports under test/, a MySQL/MariaDB or PostgreSQL connection, an S3 server or a
 * child process — the things only the integration project's global setup and machine provide. A
 * file that starts needing one moves out of the list (and then runs in `npm run test:integration`).
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UNIT_TESTS } from '../unit-tests.js';

const ROOT = join(import.meta.dirname, '..', '..');
const NEEDS_SERVER_OR_PROCESS =
  /sharedMysql|mysqlUrl|startMariaDb|startTestServer|servers\.js|local-mariadb|local-server|moto-server|s3-server|s3rver|postgres|from 'pg'|child_process|testcontainers|schemathesis|\bfork\(|spawn\(|execFile|run-floe|mariaDbAvailable|connectMysql|mysql2/;
const RELATIVE_IMPORT = /from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]/g;

function globToRegExp(glob: string): RegExp {
  const body = glob
    .split('**/')
    .map((part) => part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'))
    .join('(?:.*/)?');
  return new RegExp(`^${body}$`);
}

/** The first file on a chain of relative imports (from `file`) that needs a server or a process. */
function reachesServer(file: string, seen = new Set<string>()): string | undefined {
  if (seen.has(file)) return undefined;
  seen.add(file);
  const text = readFileSync(join(ROOT, file), 'utf8');
  if (NEEDS_SERVER_OR_PROCESS.test(text)) return file;
  for (const m of text.matchAll(RELATIVE_IMPORT)) {
    let target = normalize(join(dirname(file), m[1] ?? m[2] ?? ''));
    if (target.endsWith('.js')) target = `${target.slice(0, -3)}.ts`;
    if (!target.startsWith('test/') || !existsSync(join(ROOT, target))) continue;
    const found = reachesServer(target, seen);
    if (found) return `${file} → ${found}`;
  }
  return undefined;
}

describe('the unit test project', () => {
  const tests = (readdirSync(join(ROOT, 'test'), { recursive: true }) as string[])
    .map((f) => relative(ROOT, join(ROOT, 'test', f)))
    .filter((f) => f.endsWith('.test.ts'));
  const patterns = UNIT_TESTS.map(globToRegExp);
  const unit = tests.filter((f) => patterns.some((p) => p.test(f)));

  it('lists files that exist', () => {
    for (const [i, glob] of UNIT_TESTS.entries()) expect(tests.some((f) => patterns[i]!.test(f)), `${glob} matches no test file`).toBe(true);
    expect(unit.length).toBeGreaterThan(40);
  });

  it('needs no server and no child process', () => {
    // this file names the markers it looks for, so it does not look at itself
    const offenders = unit.filter((f) => f !== 'test/support/test-split.test.ts').map((f) => reachesServer(f)).filter((x): x is string => x !== undefined);
    expect(offenders, 'these unit tests reach a server or a process: move them out of test/unit-tests.ts').toEqual([]);
  });
});
