#!/usr/bin/env node
// The `floe` command. `npm ci` builds dist/ (the `prepare` script, `npm run build`), which starts in
// about a second. From a source checkout whose sources are newer than the build (or without a build),
// run the TypeScript sources through tsx instead, so that what runs is always what the sources say.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const built = join(root, 'dist', 'cli', 'main.js');
const sources = join(root, 'src');

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

const useBuild = existsSync(built) && (!existsSync(sources) || newestSource(sources) <= statSync(built).mtimeMs);
if (useBuild) {
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(sources, 'cli', 'main.ts')).href);
}
