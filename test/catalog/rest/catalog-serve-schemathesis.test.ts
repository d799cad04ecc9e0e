/**
 * `floe catalog serve` fuzzed from the Iceberg REST spec, so that no request a client may send crashes it: schemathesis
 * (.ci/install-schemathesis puts a pinned version into a virtualenv in the CI cache) generates valid
 * and malformed requests for every operation of apache/iceberg's open-api/rest-catalog-open-api.yaml
 * (vendored in test/fixtures/iceberg/ with its source commit) against a real `floe catalog serve`
 * child process over a filesystem warehouse:
 * - with the right token: no 5xx for anything (`not_a_server_error`; a malformed request gets a 400
 *   with the spec's ErrorModel, error-response.ts), and `ignored_auth`;
 * - with a wrong token and with none: every operation is refused with 401 (the HAR report of the run
 *   lists every response; the token endpoint answers for itself);
 * - nothing the fuzzer (or the hand-written escape attempts below) sends creates a file outside the
 *   warehouse directory.
 * Without the virtualenv the suite is skipped with a message, unless FLOE_SCHEMATHESIS_REQUIRED=1.
 * Budget: small example counts and no coverage phase (tens of thousands of requests, ~1 minute) so
 * the file stays well under 90 s; a run prints its seed, and FLOE_SCHEMATHESIS_SEED repeats it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnFloe, waitForUrl } from '../../cli/run-floe.js';

const CACHE = process.env.FLOE_CI_CACHE ?? path.join(os.homedir(), '.cache', 'floe-ci');
const ST = path.join(CACHE, 'schemathesis', 'bin', 'st');
const SPEC = fileURLToPath(new URL('../../fixtures/iceberg/rest-catalog-open-api.yaml', import.meta.url));
const required = process.env.FLOE_SCHEMATHESIS_REQUIRED === '1';
const available = existsSync(ST);
if (!available && !required) {
  console.warn(`[floe] test/catalog/rest/catalog-serve-schemathesis skipped: schemathesis is not installed at ${ST}; run .ci/install-schemathesis (FLOE_SCHEMATHESIS_REQUIRED=1 makes this a failure)`);
}

const TOKEN = 'fuzz-token-7f3a';
const PREFIX = 'floe';
const SEED = Number(process.env.FLOE_SCHEMATHESIS_SEED ?? Math.floor(Math.random() * 2 ** 31));

let dir: string;
let warehouse: string;
let base: string;
let stop: (() => Promise<unknown>) | undefined;

/** Runs `st run` on the vendored spec in `dir` (schemathesis keeps its .hypothesis state in the cwd). */
function schemathesis(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(ST, ['run', SPEC, '--url', base, '--seed', String(SEED), '--workers', '2', '--no-shrink', ...args], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1', SCHEMATHESIS_TELEMETRY: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 100_000); // under the tests' own timeouts: a hung run fails with its output
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Every response of a run, from its HAR report: method, path (query dropped), status. */
async function harResponses(file: string): Promise<{ method: string; path: string; status: number }[]> {
  const har = JSON.parse(await readFile(file, 'utf8')) as { log: { entries: { request: { method: string; url: string }; response: { status: number } }[] } };
  return har.log.entries.map((e) => ({ method: e.request.method, path: new URL(e.request.url).pathname, status: e.response.status }));
}

async function filesUnder(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) out.push(path.join(entry.parentPath, entry.name));
  return out;
}

describe.skipIf(!available && !required)('floe catalog serve under schemathesis (Iceberg REST OpenAPI spec)', () => {
  beforeAll(async () => {
    if (!available) throw new Error(`schemathesis is not installed at ${ST} and FLOE_SCHEMATHESIS_REQUIRED=1: run .ci/install-schemathesis`);
    dir = await mkdtemp(path.join(os.tmpdir(), 'floe-schemathesis-'));
    // the warehouse two levels down: an escape by ".." would land in `root` or `dir`, where it shows
    warehouse = path.join(dir, 'root', 'warehouse');
    const config = path.join(dir, 'floe.yaml');
    await writeFile(config, `warehouse:\n  location: ${warehouse}\n`);
    // schemathesis.toml: every generated {prefix} is the served one, so requests reach the handlers
    // instead of stopping at the router's 404
    await writeFile(path.join(dir, 'schemathesis.toml'), `[parameters]\n"path.prefix" = "${PREFIX}"\n`);
    const { child, done, output } = spawnFloe(['-c', config, 'catalog', 'serve', '--port', '0', '--prefix', PREFIX, '--token', TOKEN], { cwd: dir });
    stop = async () => {
      child.kill('SIGTERM');
      await done;
    };
    base = await waitForUrl(output, done);
    console.log(`[floe] schemathesis seed ${SEED} (FLOE_SCHEMATHESIS_SEED=${SEED} repeats this run)`);
  }, 70_000);
  afterAll(async () => {
    await stop?.();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('answers every generated request, valid or malformed, without a 5xx', { timeout: 110_000 }, async () => {
    const run = await schemathesis(['--header', `Authorization: Bearer ${TOKEN}`, '--checks', 'not_a_server_error,ignored_auth', '--phases', 'examples,fuzzing,stateful', '--max-examples', '4']);
    expect(run.code, run.output.slice(-6000)).toBe(0);
    expect(run.output).toMatch(/\d+ generated/);
  });

  it('refuses every operation with a wrong or a missing token (401)', { timeout: 110_000 }, async () => {
    const runs = await Promise.all(
      [['--header', 'Authorization: Bearer not-the-token'], []].map(async (auth, i) => {
        const har = path.join(dir, `auth-${i}.har`);
        const run = await schemathesis([...auth, '--checks', 'not_a_server_error', '--phases', 'examples,fuzzing', '--max-examples', '2', '--report', 'har', '--report-har-path', har]);
        return { run, responses: await harResponses(har) };
      }),
    );
    for (const { run, responses } of runs) {
      expect(run.code, run.output.slice(-4000)).toBe(0);
      // every operation of the spec was tried …
      const operations = new Set(responses.map((r) => `${r.method} ${r.path.replace(/^\/v1\/floe\/namespaces\/[^/]+/, '/v1/floe/namespaces/{namespace}')}`));
      expect(operations.size).toBeGreaterThan(15);
      // … and refused: the token endpoint takes client credentials instead (400/401 for bad ones)
      const allowed = responses.filter((r) => r.path !== '/v1/oauth/tokens' && r.status !== 401);
      expect(allowed, JSON.stringify(allowed.slice(0, 10))).toEqual([]);
    }
  });

  it('keeps every name inside the warehouse', { timeout: 30_000 }, async () => {
    const call = async (method: string, route: string, body?: unknown) => {
      const res = await fetch(`${base}/v1/${PREFIX}${route}`, {
        method,
        headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, text };
    };
    const schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'a', type: 'int', required: false }] };
    // a property named like Object's prototype is data like any other (it used to vanish silently)
    const odd = await call('POST', '/namespaces', { namespace: ['inside'], properties: JSON.parse('{"__proto__": "p", "constructor": "c"}') as Record<string, string> });
    expect(odd.status, odd.text).toBe(200);
    expect(JSON.parse((await call('GET', '/namespaces/inside')).text).properties).toMatchObject(JSON.parse('{"__proto__": "p", "constructor": "c"}') as object);
    const attempts = [
      await call('POST', '/namespaces', { namespace: ['..'] }),
      await call('POST', '/namespaces', { namespace: ['..', '..', 'escaped'] }),
      await call('POST', '/namespaces', { namespace: ['../../escaped'] }),
      await call('POST', '/namespaces', { namespace: ['a\\..\\..\\escaped'] }),
      await call('POST', '/namespaces', { namespace: ['/tmp/escaped'] }),
      await call('POST', '/namespaces', { namespace: ['c:escaped'] }),
      await call('POST', '/namespaces', { namespace: ['x'.repeat(300)] }),
      await call('POST', '/namespaces', { namespace: Array.from({ length: 30 }, () => 'y'.repeat(250)) }),
      await call('GET', '/namespaces/%2E%2E'), // fetch itself resolves this one (WHATWG URL): the router's 404
      await call('GET', '/namespaces/.%2E%1F..'),
      await call('GET', '/namespaces/..%1F..%1Fescaped'),
      await call('POST', '/namespaces/inside/tables', { name: '../../../escaped', schema }),
      await call('POST', '/namespaces/inside/tables', { name: '..', schema }),
      await call('POST', '/namespaces/inside/tables', { name: 't', schema, location: path.join(dir, 'escaped') }),
      await call('POST', '/namespaces/inside/tables', { name: 't2', schema, location: `file://${dir}/root/warehouse/../escaped` }),
      await call('POST', '/namespaces/inside/register', { name: 'r', 'metadata-location': '/etc/passwd' }),
      // not an escape, but a malformed field that was read as false (a real create instead of a staged one)
      await call('POST', '/namespaces/inside/tables', { name: 'staged', schema, 'stage-create': 'true' }),
      await call('POST', '/tables/rename', { source: { namespace: ['inside'], name: 'none' }, destination: { namespace: ['..'], name: 'escaped' } }),
    ];
    const badDrop = await call('DELETE', '/namespaces/.hidden');
    expect(badDrop.status, badDrop.text).toBe(400); // a bad name, not "namespace not empty" (409)
    for (const a of attempts) {
      expect(a.status, a.text).toBeGreaterThanOrEqual(400);
      expect(a.status, a.text).toBeLessThan(500);
      expect(JSON.parse(a.text)).toMatchObject({ error: { code: a.status, type: expect.any(String), message: expect.any(String) } });
    }
    // After the fuzz runs and these: `root` holds only the warehouse, `dir` only what the test wrote.
    expect(await readdir(path.join(dir, 'root'))).toEqual(['warehouse']);
    const top = (await readdir(dir)).filter((n) => !['floe.yaml', 'schemathesis.toml', 'root', '.hypothesis', '.schemathesis', 'auth-0.har', 'auth-1.har', 'schemathesis-report'].includes(n));
    expect(top).toEqual([]);
    const escaped = (await filesUnder(dir)).filter((f) => !f.startsWith(warehouse + path.sep) && f !== warehouse && /escaped/.test(f));
    expect(escaped).toEqual([]);
  });
});
