/**
 * The benchmark's verification step: `floe verify` of the benchmark table (bench/verify-child.ts, a
 * child process) — rows per second, bytes read from the lake, CPU of the verifying process — and the
 * CPU the server spent meanwhile, beside the same figure for floe's snapshot (issue target: at least
 * the snapshot's rate, with the server's CPU below the snapshot's).
 *
 * The server's CPU: its process's user + system time from /proc (`@@pid_file` names it), so only
 * for a server on this machine; undefined otherwise.
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { connectMysql, type MysqlConnectionConfig } from '../src/source/mysql/client.js';
import type { VerifyChildResult } from './verify-child.js';

const CHILD = fileURLToPath(new URL('./verify-child.ts', import.meta.url));

/** CPU seconds the server process has used so far (undefined: not on this machine, or no /proc). */
export async function serverCpuSeconds(connection: MysqlConnectionConfig): Promise<number | undefined> {
  const client = await connectMysql(connection);
  try {
    const [row] = await client.query<{ f: string }>('SELECT @@pid_file AS f');
    const pid = readFileSync(String(row?.f), 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return undefined;
  } finally {
    await client.close();
  }
}

export async function runFloeVerify(config: unknown): Promise<VerifyChildResult> {
  const child = fork(CHILD, [], { execArgv: ['--import', 'tsx'], env: { ...process.env, FLOE_BENCH_CONFIG: JSON.stringify(config) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const result = await new Promise<VerifyChildResult | undefined>((resolve) => {
    child.once('message', (m: VerifyChildResult) => resolve(m));
    child.once('exit', () => resolve(undefined));
  });
  if (!result) throw new Error(`bench: the verify process exited (${child.signalCode ?? child.exitCode}) without its figures`);
  if (result.status !== 'equal') throw new Error(`bench: floe verify did not find the lake equal: ${result.status}: ${result.error ?? ''}`);
  return result;
}
