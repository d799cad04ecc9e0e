/**
 * What the verify end-to-end tests share: a floe config file for a warehouse, `floe verify --json` as
 * a child process with its table records parsed, and a writer that is not the job changing the lake
 * behind floe's back (floe's own writer library, stamped with another job id).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Catalog } from '../../../src/iceberg/metadata/catalog.js';
import { TableCommitter } from '../../../src/iceberg/checkpoint/index.js';
import type { RowChange } from '../../../src/iceberg/writer/index.js';
import type { TableVerification } from '../../../src/pipeline/verify/verify-result.js';
import { parseJson } from '../../../src/util/json.js';
import { runFloe, type FloeRun } from '../../cli/run-floe.js';

/** Writes `config` as the floe config file of `dir` and returns its path. */
export async function writeConfig(dir: string, config: Record<string, unknown>): Promise<string> {
  const path = join(dir, 'floe.json');
  await writeFile(path, JSON.stringify(config, null, 2));
  return path;
}

export interface VerifyRun extends FloeRun {
  tables: TableVerification[];
  summary: { status: string } | undefined;
}

/** `floe verify -c <config> --json …`, its exit code and its records. */
export async function floeVerify(configPath: string, args: string[] = [], timeoutMs = 300_000): Promise<VerifyRun> {
  const run = await runFloe(['verify', '-c', configPath, '--json', '--log-format', 'json', ...args], { timeoutMs });
  const records = run.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => parseJson(l) as { type: string });
  return {
    ...run,
    tables: records.filter((r) => r.type === 'table') as unknown as TableVerification[],
    summary: records.find((r) => r.type === 'summary') as { status: string } | undefined,
  };
}

/** Another writer (not the job) changes a table: upserts and deletes, one commit stamped with its own job id. */
export async function intrude(catalog: Catalog, identifier: { namespace: string[]; name: string }, changes: RowChange[]): Promise<void> {
  const committer = new TableCommitter({ catalog, identifier, jobId: 'intruder' });
  try {
    await committer.open({ mode: 'upsert' });
    await committer.write(changes);
    const last = await committer.lastCommitted();
    const outcome = await committer.commit((last?.checkpointId ?? 0n) + 1n, '{}');
    if (outcome.status !== 'committed') throw new Error(`the intruding commit did not land: ${outcome.status}`);
  } finally {
    committer.close();
  }
}

/** Every row difference a verification reported for a table, as comparable records. */
export function foundRows(t: TableVerification, keyColumn: string): { kind: string; key: number; columns?: readonly string[]; chunkHoldsKey: boolean }[] {
  return t.differences.flatMap((d) => {
    const holds = (key: number) => (d.lower === undefined || Number(d.lower[0]) <= key) && (d.upper === undefined || key < Number(d.upper[0]));
    return [
      ...d.rows.samples.onlyInMysql.map((r) => ({ kind: 'only in MySQL', key: Number(r[keyColumn]), chunkHoldsKey: holds(Number(r[keyColumn])) })),
      ...d.rows.samples.onlyInLake.map((r) => ({ kind: 'only in the lake', key: Number(r[keyColumn]), chunkHoldsKey: holds(Number(r[keyColumn])) })),
      ...d.rows.samples.differing.map((r) => ({ kind: 'differs', key: Number(r.key[keyColumn]), columns: r.columns, chunkHoldsKey: holds(Number(r.key[keyColumn])) })),
    ];
  });
}
