/**
 * Global setup of the interop suite: one engines server (a SparkSession and an Iceberg Java JVM,
 * engines/lib/server.py) for every test file, in a run directory of its own so that it neither meets
 * nor stops a server someone else started. Nothing happens when the engines are not installed (the
 * suite then skips or fails by itself).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { enginesServer, missingEngines } from './engines.js';

let run: string | undefined;

export async function setup(): Promise<void> {
  if (missingEngines().length > 0) return;
  run = await mkdtemp(join(tmpdir(), 'floe-engines-server-'));
  // the test workers inherit it: engines/read and the Spark helpers find this server through it
  process.env.FLOE_ENGINES_SERVER_RUN = run;
  console.log(`[floe] ${await enginesServer('start', {}, ['spark'])}`);
}

export async function teardown(): Promise<void> {
  if (run === undefined) return;
  await enginesServer('stop').catch((e: unknown) => console.warn(`[floe] ${String(e)}`));
  await rm(run, { recursive: true, force: true });
}
