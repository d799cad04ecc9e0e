/**
 * A benchmark peer is a small Java harness (bench/peers/<name>/) built by bench/peers/install into
 * $FLOE_PEERS_HOME (~/.cache/floe-peers) and run as `java -cp classes:lib/* <main> key=value…`; it
 * prints one JSON line of figures on stdout. This module builds one (once per bench run; a no-op when
 * its stamp matches) and runs it. A missing java/mvn or a failed build is a reason to skip the peer,
 * not an error of the bench.
 */
import { execFile, spawn } from 'node:child_process';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { MysqlConnectionConfig } from '../../src/source/mysql/client.js';
import { TABLE } from '../dataset.js';

const run = promisify(execFile);
const INSTALL = join(import.meta.dirname, 'install');

export type PeerName = 'debezium' | 'flink-cdc';

export type PeerBuild = { ok: true; classPath: string } | { ok: false; reason: string };

function peersHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.FLOE_PEERS_HOME || join(homedir(), '.cache', 'floe-peers');
}

async function onPath(tool: string): Promise<boolean> {
  try {
    await run('sh', ['-c', `command -v ${tool}`]);
    return true;
  } catch {
    return false;
  }
}

/** Builds (or finds built) the peer's harness; the reason says what to install when it cannot. */
export async function buildPeer(name: PeerName, env: NodeJS.ProcessEnv = process.env): Promise<PeerBuild> {
  for (const tool of ['java', 'mvn']) {
    if (!(await onPath(tool))) return { ok: false, reason: `${tool} not found on PATH (install a JDK 17+ and Maven: apt-get install openjdk-17-jdk-headless maven)` };
  }
  try {
    // the first build downloads the harness's dependencies from Maven Central (minutes); later ones are no-ops
    await run('bash', [INSTALL, name], { env, maxBuffer: 1 << 24, timeout: 1_200_000 });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    const detail = (err.stderr ?? err.message).trim().split('\n').pop()?.replace(/^peers: /, '') ?? '';
    return { ok: false, reason: `bench/peers/install ${name} failed: ${detail}` };
  }
  const home = join(peersHome(env), name);
  // first/: jars that must shadow others (bench/peers/install says which)
  return { ok: true, classPath: `${join(home, 'classes')}:${join(home, 'first', '*')}:${join(home, 'lib', '*')}` };
}

interface HarnessOutput {
  /** The harness's JSON line. */
  figures: Record<string, unknown>;
  /** Its stderr's last lines (Debezium's and Flink's warnings), for an error message. */
  stderrTail: string;
}

/** Runs `mainClass` with `args` (key=value) and returns its JSON line; throws when it prints none. */
async function runHarness(build: Extract<PeerBuild, { ok: true }>, mainClass: string, args: Record<string, string | number>, timeoutMs: number): Promise<HarnessOutput> {
  const argv = [
    // a fixed heap: the JVM's default (a quarter of the machine's memory) would make the RSS figure the JVM's whim
    '-Xms512m',
    '-Xmx2g',
    '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
    '-Djava.util.logging.config.file=/dev/null',
    '-cp',
    build.classPath,
    mainClass,
    ...Object.entries(args).map(([k, v]) => `${k}=${v}`),
  ];
  const child = spawn('java', argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs + 60_000);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  }).finally(() => clearTimeout(timer));
  const stderrTail = stderr.trim().split('\n').slice(-5).join('\n');
  const line = stdout.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  if (!line) throw new Error(`bench: the ${mainClass} harness printed no figures (exit ${code}); its stderr ends with:\n${stderrTail}`);
  return { figures: JSON.parse(line) as Record<string, unknown>, stderrTail };
}

/** The server and table a peer reads: the bench's. */
export interface PeerTarget {
  connection: MysqlConnectionConfig;
  database: string;
  flavor: 'mysql' | 'mariadb';
  timeoutMs: number;
  /** Keep consuming this long after the expected count, so that a record too many shows (tests; Debezium). */
  settleMs?: number;
}

/** The harness arguments every peer takes from its target. */
export function targetArguments(t: PeerTarget): Record<string, string | number> {
  return { host: t.connection.host, port: t.connection.port, user: t.connection.user, password: t.connection.password, database: t.database, table: TABLE, timeoutMs: t.timeoutMs };
}

/** One phase of a peer, from its harness's JSON line (the same fields for every peer). */
export interface PeerRun {
  /** Records counted: rows of the snapshot, row changes of the streaming. */
  count: number;
  /** First record to the last expected one: the rate's window. */
  windowMs: number;
  /** Engine start to the first record: connecting, schema reading, locks. */
  startToFirstMs: number;
  /** The whole harness, engine start to the engine stopped. */
  totalMs: number;
  /** CPU of the JVM (all threads) within the window. */
  windowCpuMs: number;
  processCpuMs: number;
  peakRssBytes: number;
  /** The peer's version and its connector (or source) class. */
  version: string;
  connector: string;
}

/** Runs one phase (`what`, for errors) of the peer named `peer` and reads its figures; throws on its error line. */
export async function runPeerPhase(build: Extract<PeerBuild, { ok: true }>, peer: string, what: string, mainClass: string, args: Record<string, string | number>, timeoutMs: number): Promise<PeerRun> {
  const { figures, stderrTail } = await runHarness(build, mainClass, args, timeoutMs);
  if (typeof figures.error === 'string') throw new Error(`bench: ${peer}'s ${what} failed: ${figures.error}\n${stderrTail}`);
  const n = (key: string): number => {
    const v = figures[key];
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`bench: ${peer}'s harness printed no number for ${key}: ${JSON.stringify(figures)}`);
    return v;
  };
  return {
    count: n('count'),
    windowMs: n('firstToLastMs'),
    startToFirstMs: n('startToFirstMs'),
    totalMs: n('totalMs'),
    windowCpuMs: n('windowCpuMs'),
    processCpuMs: n('processCpuMs'),
    peakRssBytes: n('peakRssBytes'),
    version: String(figures.version),
    connector: String(figures.connector),
  };
}
