/**
 * `floe verify`'s exit codes when it cannot verify at all, as a real child process: a configuration
 * without a source or a bad option is a usage error (2, nothing touched); a source that does not
 * answer is a failed pre-flight, as `floe check` reports it (3), with a message naming the server.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../src/demo/local-server.js';
import { writeConfig } from '../e2e/support/verify-lake.js';
import { useTempDirectory } from '../support/temp-dir.js';
import { runFloe } from './run-floe.js';

const dir = useTempDirectory('floe-verify-cli-');

describe('floe verify exit codes', () => {
  it('exits 2 on a configuration without a source and on a bad option', async () => {
    const config = await writeConfig(dir(), { warehouse: { location: join(dir(), 'warehouse') } });
    const noSource = await runFloe(['verify', '-c', config]);
    expect(noSource.code).toBe(2);
    expect(noSource.stderr).toMatch(/no source configured: .* has no `source:` section; floe verify compares the lake with it/);
    const withSource = await writeConfig(dir(), { source: { host: '127.0.0.1', port: await freePort(), user: 'root', include: ['shop.*'] }, warehouse: { location: join(dir(), 'warehouse') } });
    const bad = await runFloe(['verify', '-c', withSource, '--chunk-size', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--chunk-size expects a positive whole number, found "0"/);
  });

  it('exits 3 when the source does not answer', async () => {
    const port = await freePort();
    const config = await writeConfig(dir(), { source: { host: '127.0.0.1', port, user: 'root', password: 'secret-pw', include: ['shop.*'] }, warehouse: { location: join(dir(), 'warehouse') } });
    const refused = await runFloe(['verify', '-c', config]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(new RegExp(`floe verify: source\\.mysql: cannot connect to root@127\\.0\\.0\\.1:${port}: connection refused \\(ECONNREFUSED\\)`));
    expect(refused.stderr).not.toContain('secret-pw');
  });
});
