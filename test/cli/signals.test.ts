/**
 * SIGINT / SIGTERM in a real child process: the first aborts the pipeline's signal (the runner then
 * commits and returns), the second exits at once with code 130.
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const TSX = pathToFileURL(require.resolve('tsx/esm')).href;
const SIGNALS = pathToFileURL(fileURLToPath(new URL('../../src/cli/signals.ts', import.meta.url))).href;
const LOGGER = pathToFileURL(fileURLToPath(new URL('../../src/pipeline/observe/logger.ts', import.meta.url))).href;

const SCRIPT = `
const { handleStopSignals } = await import(${JSON.stringify(SIGNALS)});
const { createLogger } = await import(${JSON.stringify(LOGGER)});
const stop = handleStopSignals(createLogger({ format: 'json' }));
stop.signal.addEventListener('abort', () => process.stdout.write('aborted\\n'));
setInterval(() => {}, 1000); // a pipeline that takes its time to commit
process.stdout.write('ready\\n');
`;

describe('stop signals', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('first %s aborts the run, a second one exits with 130', async (signal) => {
    const child = spawn(process.execPath, ['--import', TSX, '--input-type=module', '-e', SCRIPT], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const lines = async (text: string): Promise<void> => {
      while (!stdout.includes(text)) await new Promise<void>((resolve) => child.stdout.once('data', (d: Buffer) => ((stdout += d.toString()), resolve())));
    };
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await lines('ready');
    child.kill(signal);
    await lines('aborted');
    expect(child.exitCode).toBeNull(); // still running: the checkpoint is being committed
    child.kill(signal);
    expect(await exited).toBe(130);
    const logged = stderr.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged.map((l) => [l.level, l.signal])).toEqual([
      ['warn', signal],
      ['error', signal],
    ]);
    expect(String(logged[0]!.msg)).toContain('stopping after the current checkpoint is committed');
  });
});
