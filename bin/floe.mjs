#!/usr/bin/env node
// The `floe` command. `npm ci` builds dist/ (the `prepare` script, `npm run build`), which starts in
// about a second. From a source checkout whose sources are newer than the build (or without a build),
// run the TypeScript sources through tsx instead, so that what runs is always what the sources say.
// tsx is a dev dependency: only a checkout runs its sources, and a checkout's `npm ci` installs it (an
// installed package's dist/ is current: npm packs every file with one mtime).
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';
import { buildIsCurrent } from './build-current.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const built = join(root, 'dist', 'cli', 'main.js');
const sources = join(root, 'src');

const useBuild = buildIsCurrent(root);
if (useBuild) {
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(sources, 'cli', 'main.ts')).href);
}
