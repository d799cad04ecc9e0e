/**
 * `floe scan` as a real child process (`node bin/floe.mjs scan …`, working directory =
 * the golden fixtures folder, whose metadata holds relative paths): every golden table's final rows,
 * and the rows at every snapshot via --snapshot-id (sequence numbers mapped to snapshot ids through the
 * metadata), compared as multisets with expected.json. Plus --limit, and the exit codes of errors.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findCurrentMetadataFile, readTableMetadataFile } from '../../src/catalog/filesystem/filesystem-versions.js';
import { LocalFileIO } from '../../src/io/local-file-io.js';
import { parseJson } from '../../src/util/json.js';
import { actualMultiset, expectedMultiset, expectedTables, GOLDEN, MISSING_MANIFEST_LISTS } from '../iceberg/scan/golden-expected.js';
import { goldenAvailable } from '../support/golden.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const floeBin = path.join(repo, 'bin/floe.mjs');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function floe(args: string[], cwd = GOLDEN): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [floeBin, ...args], { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, FLOE_CONFIG: '' } }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

function lines(run: Run): Record<string, unknown>[] {
  expect(run.stderr, run.stderr).toBe('');
  expect(run.code).toBe(0);
  return run.stdout
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => parseJson(l) as Record<string, unknown>);
}

describe.skipIf(!goldenAvailable)('floe scan (child process) on the golden tables', () => {
  const tables = goldenAvailable ? expectedTables() : {};
  for (const [dir, expected] of Object.entries(tables)) {
    const target = expected.metadata ? `${dir}/${expected.metadata}` : dir;
    it(`${dir}: current rows`, async () => {
      const rows = lines(await floe(['scan', target]));
      expect(actualMultiset(expected.columns, rows)).toEqual(expectedMultiset(expected.columns, expected.final));
    });
    if (expected.bySequenceNumber) {
      it(`${dir}: rows at every snapshot (--snapshot-id)`, async () => {
        const io = new LocalFileIO({ baseDir: GOLDEN });
        const metadata = await readTableMetadataFile(io, (await findCurrentMetadataFile(io, path.join(GOLDEN, dir)))!);
        const missing: string[] = [];
        const cases = Object.entries(expected.bySequenceNumber!).map(([seq, rowsAt]) => {
          const snapshot = metadata.snapshots.find((s) => s.sequenceNumber === BigInt(seq));
          expect(snapshot, `snapshot with sequence number ${seq}`).toBeDefined();
          return { seq, rowsAt, snapshot: snapshot! };
        });
        // The child processes run side by side: each spends most of its time starting up.
        const runs = await Promise.all(cases.map((c) => floe(['scan', target, '--snapshot-id', String(c.snapshot.snapshotId)])));
        cases.forEach(({ seq, rowsAt, snapshot }, i) => {
          const run = runs[i];
          if (!fs.existsSync(path.join(GOLDEN, snapshot.manifestList))) {
            missing.push(`${dir}@${seq}`);
            expect(run.code).toBe(1);
            expect(run.stderr).toMatch(/manifest list of snapshot \d+ .* is missing/);
            return;
          }
          expect(actualMultiset(expected.columns, lines(run)), `sequence number ${seq}`).toEqual(expectedMultiset(expected.columns, rowsAt));
        });
        expect(missing).toEqual(MISSING_MANIFEST_LISTS.filter((m) => m.startsWith(`${dir}@`)));
      });
    }
  }

  it('prints exact longs, --limit stops early, and errors exit 1 (not found) or 2 (usage)', async () => {
    const dir = 'data/persistent/add_columns_with_defaults/default.db/add_columns_with_defaults';
    const [run, none, bad] = await Promise.all([
      floe(['scan', dir, '--limit', '1']),
      floe(['scan', 'data/persistent/no_such_table']),
      floe(['scan', dir, '--snapshot-id', 'abc']),
    ]);
    expect(run.code).toBe(0);
    const out = run.stdout.trim().split('\n');
    expect(out).toHaveLength(1);
    // The long column is printed as an exact JSON integer, never through a double.
    expect(out[0]).toMatch(/"col_long":(-9223372036854775808|328725092345834)[,}]/);

    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no Iceberg table at data\/persistent\/no_such_table/);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--snapshot-id expects an integer/);
  });
});
