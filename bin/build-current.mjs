// Whether floe's build (dist/) is current: it exists and no source file is newer. Shared by the
// `floe` command (bin/floe.mjs) and the benchmark (bench/floe-build.ts), so that both run the same floe.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** `root`: the repository (or installed package) root, holding dist/ and, in a checkout, src/. */
export function buildIsCurrent(root) {
  const built = join(root, 'dist', 'cli', 'main.js');
  const sources = join(root, 'src');
  return existsSync(built) && (!existsSync(sources) || newestSource(sources) <= statSync(built).mtimeMs);
}
