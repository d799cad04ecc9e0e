/**
 * Thread modules started by io/module-worker.ts: a built (`.js`) module's worker runs without the
 * parent's tsx loader — a real Node process started with `--import tsx` starts one and reports the
 * Node options the worker got; with a V8 option among them (which a worker refuses when given) it
 * still starts, inheriting them all — and `withoutTsx` drops tsx's loader options in each spelling,
 * nothing else.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { withoutTsx } from '../../src/io/module-worker.js';

const dir = mkdtempSync(join(tmpdir(), 'floe-module-worker-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('startModuleWorker', () => {
  it('a built thread module runs without the parent\'s tsx loader, with its other options', () => {
    const thread = join(dir, 'thread.js');
    writeFileSync(thread, "import { parentPort } from 'node:worker_threads';\nparentPort.postMessage(process.execArgv);\n");
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    const main = join(dir, 'main.ts');
    const moduleWorker = pathToFileURL(fileURLToPath(new URL('../../src/io/module-worker.ts', import.meta.url))).href;
    writeFileSync(
      main,
      `import { startModuleWorker } from ${JSON.stringify(moduleWorker)};\n` +
        `const w = startModuleWorker(new URL(${JSON.stringify(pathToFileURL(thread).href)}));\n` +
        `w.on('message', (m: string[]) => { console.log(JSON.stringify({ parent: process.execArgv, worker: m })); void w.terminate(); });\n`,
    );
    const started = (options: string[]): { parent: string[]; worker: string[] } => {
      const out = spawnSync(process.execPath, [...options, main], { cwd: fileURLToPath(new URL('../..', import.meta.url)), encoding: 'utf8', timeout: 60_000 });
      expect(out.status, out.stderr).toBe(0);
      return JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { parent: string[]; worker: string[] };
    };
    expect(started(['--no-deprecation', '--import', 'tsx'])).toEqual({ parent: ['--no-deprecation', '--import', 'tsx'], worker: ['--no-deprecation'] });
    // a V8 option, which a worker refuses when given but takes when inherited: inherited, tsx too
    const withV8 = ['--max-old-space-size=512', '--import', 'tsx'];
    expect(started(withV8)).toEqual({ parent: withV8, worker: withV8 });
  });

  it('withoutTsx: --import/--require/--loader tsx in each spelling go, everything else stays in order', () => {
    expect(withoutTsx(['--import', 'tsx', '--cpu-prof', '--cpu-prof-dir=p', '--require', 'tsx/cjs', '--import=tsx', '--loader', 'tsx/esm', '-r', 'tsx', '--import', 'other', '--max-old-space-size=512'])).toEqual([
      '--cpu-prof',
      '--cpu-prof-dir=p',
      '--import',
      'other',
      '--max-old-space-size=512',
    ]);
    expect(withoutTsx(['--import', 'tsxx'])).toEqual(['--import', 'tsxx']);
  });
});
