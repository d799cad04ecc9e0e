/**
 * `floe run` (a real child process) when the source stays away: the pipeline is restarted as
 * `source.restart` says, and then fails with the source's own error, its subsystem named once, and
 * how long floe kept trying.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../src/demo/local-server.js';
import { useTempDirectory } from '../support/temp-dir.js';
import { logLines, runFloe } from './run-floe.js';

const dir = useTempDirectory('floe-session-');

describe('floe run with a source that stays away', () => {
  it('restarts the pipeline, then gives up with the connection error named once', async () => {
    const port = await freePort();
    const file = join(dir(), 'away.yaml');
    await writeFile(
      file,
      `source: { host: 127.0.0.1, port: ${port}, user: floe, restart: { maxAttempts: 2, initialDelayMs: 50, maxDelayMs: 50 } }\nwarehouse: { location: ${JSON.stringify(join(dir(), 'wh'))} }\n`,
    );
    const run = await runFloe(['run', '-c', file, '--no-preflight', '--log-format', 'json'], { cwd: dir() });
    expect(run.code).toBe(1);
    const lines = logLines(run.stderr);
    const refused = `source.mysql: cannot connect to floe@127.0.0.1:${port}: connection refused (ECONNREFUSED): no server listens there; check source.host and source.port, and that the server runs`;
    expect(lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([
      `${refused}; restarting the pipeline from the lake in 50 ms (restart 1/2)`,
      `${refused}; restarting the pipeline from the lake in 50 ms (restart 2/2)`,
    ]);
    const failed = lines.find((l) => l.notification === 'failed');
    expect(failed?.error).toBe(`${refused}; gave up after 2 restart(s) of the pipeline in a row (source.restart.maxAttempts)`);
  });
});
