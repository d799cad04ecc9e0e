/**
 * Which floe the benchmark runs: the build (dist/, what the `floe` command runs after `npm ci`) when
 * it is current — the rule of the command itself (bin/build-current.mjs) — else the TypeScript
 * sources through tsx (which transpiles every module floe and its worker threads load, inside the
 * measured run: a few tenths of a second of a CDC run's CPU).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIsCurrent } from '../bin/build-current.mjs';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/** The directory floe's modules are imported from (dist/ or src/), and what it is. */
export function floeModules(): { dir: string; what: 'build' | 'sources' } {
  return buildIsCurrent(ROOT) ? { dir: join(ROOT, 'dist'), what: 'build' } : { dir: join(ROOT, 'src'), what: 'sources' };
}
