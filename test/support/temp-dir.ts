/** Fresh directories under the OS temp directory, named `<prefix>…`. */
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { madeBeforeAll } from './before-all.js';

/** A directory named `floe-<label>-…`; the caller removes it. */
export function tempDir(label: string): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), `floe-${label}-`));
}

/** A directory named `<prefix>…` for the tests of the calling file (or describe block), removed after the last. */
export function useTempDirectory(prefix: string): () => string {
  return madeBeforeAll(`the temporary directory ${prefix}…`, () => mkdtempSync(path.join(os.tmpdir(), prefix)), (dir) => rmSync(dir, { recursive: true, force: true }));
}
