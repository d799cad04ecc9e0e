/** A fresh directory under the OS temp directory, named `floe-<label>-…`; the caller removes it. */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export function tempDir(label: string): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), `floe-${label}-`));
}
