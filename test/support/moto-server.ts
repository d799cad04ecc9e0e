/**
 * An S3-compatible server that honours conditional writes, run without Docker: moto in server mode
 * (PyPI `moto[server]`), installed by `.ci/install-s3-server` into `~/.cache/floe-ci/moto-<version>`
 * (or `$FLOE_CI_CACHE`). `FLOE_MOTO_SERVER` may name another `moto_server` executable.
 *
 * Why moto, and which version. floe's filesystem catalog on S3 commits a table version by creating
 * `v<N+1>.metadata.json` with PutObject `If-None-Match: *` (src/io/s3-file-io.ts `writeIfAbsent`,
 * src/catalog/filesystem/filesystem-catalog.ts), and refuses to commit where a probe shows the header ignored
 * (src/io/s3-atomic-create-probe.ts). The test server must therefore answer a conditional PutObject on
 * an existing key with 412 PreconditionFailed. Experiment (2026-12-01, @aws-sdk/client-s3, path style):
 *   - moto 5.2.5: second `PutObject IfNoneMatch: '*'` → 412 PreconditionFailed; second
 *     `CompleteMultipartUpload IfNoneMatch: '*'` → 412 PreconditionFailed (moto/s3/responses.py
 *     `put_object` and the multipart completion both check the header). 30 rounds of 16 concurrent
 *     conditional PUTs of 200 kB to one fresh key: exactly one winner in every round.
 *   - moto 5.0.14: both second writes ACCEPTED (the header ignored, like s3rver) — hence the pin.
 * floe never creates conditionally with multipart (writeIfAbsent is a single PutObject: metadata files
 * are small), so the PutObject behaviour is the one the catalog relies on.
 * SeaweedFS's S3 gateway was the alternative; it must be built from source with the Go toolchain
 * (minutes of CPU on a shared machine) and brings a master, a volume server and a filer — moto is one
 * process that starts in about a second.
 *
 * Caveat (read from moto's source, not observed): moto checks "key exists" and stores the object in
 * one request handler without a per-key lock, under CPython's GIL; the concurrent experiment above found
 * no double winner, and the race tests here synchronise the two committers on purpose so that they
 * always collide on the same version.
 *
 * Skipping: `motoStatus()` says whether the server is installed; tests skip with that reason, unless
 * FLOE_S3_SERVER_REQUIRED=1 (CI), where a missing server fails the test file instead.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/demo/local-server.js';
import type { S3Config } from '../../src/io/s3-file-io.js';
import { createBucket, type TestS3Server } from './s3-server.js';

const MOTO_VERSION = '5.2.5';

/** Where `.ci/install-s3-server` puts moto's `moto_server` (or `$FLOE_MOTO_SERVER`). */
function motoServerPath(): string {
  if (process.env.FLOE_MOTO_SERVER) return process.env.FLOE_MOTO_SERVER;
  const cache = process.env.FLOE_CI_CACHE ?? path.join(os.homedir(), '.cache', 'floe-ci');
  return path.join(cache, `moto-${MOTO_VERSION}`, 'bin', 'moto_server');
}

export interface S3ServerStatus {
  available: boolean;
  reason: string;
}

/**
 * Whether moto is installed. With FLOE_S3_SERVER_REQUIRED=1 a missing server throws (the test file
 * fails) instead of returning a reason to skip.
 */
export function motoStatus(): S3ServerStatus {
  const bin = motoServerPath();
  if (existsSync(bin)) return { available: true, reason: bin };
  const reason = `moto_server is not installed at ${bin}; run .ci/install-s3-server (or set FLOE_MOTO_SERVER)`;
  if (process.env.FLOE_S3_SERVER_REQUIRED === '1') throw new Error(`FLOE_S3_SERVER_REQUIRED=1 but ${reason}`);
  return { available: false, reason };
}

/**
 * moto accepts any credentials (it does not verify SigV4). These are long and distinctive so that
 * tests can assert they never appear in an error message.
 */
export const MOTO_ACCESS_KEY_ID = 'FLOEMOTOTESTKEYID0001';
export const MOTO_SECRET_ACCESS_KEY = 'floe-moto-test-secret-do-not-print-8c1f';

// The Python side: start moto's server, and exit when the process that started us is gone (a test
// process killed by a timeout must not leave servers behind). `moto.server.main` is moto_server's
// entry point (moto/server.py).
const LAUNCHER = `
import os, sys, threading, time
parent = os.getppid()
def watch():
    while True:
        time.sleep(1)
        if os.getppid() != parent:
            os._exit(0)
threading.Thread(target=watch, daemon=True).start()
from moto.server import main
main(sys.argv[1:])
`;

/** Starts moto on a free port of 127.0.0.1 with one empty bucket. */
export async function startMoto(bucket = 'warehouse'): Promise<TestS3Server> {
  const bin = motoServerPath();
  // moto_server is a console script of the virtualenv: its interpreter sits next to it.
  const python = path.join(path.dirname(bin), 'python');
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const child = existsSync(python) && !process.env.FLOE_MOTO_SERVER
      ? spawn(python, ['-c', LAUNCHER, '-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] })
      : spawn(bin, ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    const endpoint = `http://127.0.0.1:${port}`;
    try {
      await waitUntilServing(endpoint, child, () => stderr);
    } catch (e) {
      lastError = e;
      await stopChild(child);
      continue; // most likely the port was taken between freePort() and bind: try another
    }
    const config: S3Config = {
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      accessKeyId: MOTO_ACCESS_KEY_ID,
      secretAccessKey: MOTO_SECRET_ACCESS_KEY,
    };
    await createBucket(config, bucket);
    return {
      config,
      bucket,
      createBucket: (name) => createBucket(config, name),
      stop: () => stopChild(child),
    };
  }
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}

async function waitUntilServing(endpoint: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  let exited = false;
  child.once('exit', () => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error(`moto_server exited before serving ${endpoint}: ${stderr()}`);
    try {
      // moto's own API answers once the server is up (moto/moto_api).
      const response = await fetch(`${endpoint}/moto-api/data.json`, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`moto_server did not serve ${endpoint} within 30 s: ${stderr()}`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
