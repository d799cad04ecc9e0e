/**
 * Which floe the benchmark runs: the build (dist/, what the `floe` command runs after `npm ci`) when
 * it is at least as new as every source file — the rule of bin/floe.mjs — else the TypeScript
 * sources through tsx (which transpiles every module floe and its worker threads load, inside the
 * measured run: a few tenths of a second of a CDC run's CPU).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** The directory floe's modules are imported from (dist/ or src/), and what it is. */
export function floeModules(): { dir: string; what: 'build' | 'sources' } {
  const built = join(ROOT, 'dist', 'cli', 'main.js');
  if (existsSync(built) && newestSource(join(ROOT, 'src')) <= statSync(built).mtimeMs) return { dir: join(ROOT, 'dist'), what: 'build' };
  return { dir: join(ROOT, 'src'), what: 'sources' };
}
