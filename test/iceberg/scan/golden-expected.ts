/** The golden fixtures (fixtures/iceberg-golden) and their expected rows, shared by the scan tests. */
import fs from 'node:fs';
import path from 'node:path';
import { parseJson, stringifyJson } from '../../../src/util/json.js';
import { GOLDEN_DIR } from '../../support/golden.js';

export const GOLDEN = GOLDEN_DIR;

interface ExpectedTable {
  metadata?: string;
  columns: string[];
  final: unknown[][];
  bySequenceNumber?: Record<string, unknown[][]>;
}

export function expectedTables(): Record<string, ExpectedTable> {
  return parseJson(fs.readFileSync(path.join(GOLDEN, 'expected.json'), 'utf8')) as Record<string, ExpectedTable>;
}

/** Expected rows as sorted JSON texts of the listed columns. */
export function expectedMultiset(columns: string[], rows: unknown[][]): string[] {
  return rows.map((r) => stringifyJson(Object.fromEntries(columns.map((c, i) => [c, r[i]])))).sort();
}

/** Actual JSON row objects restricted to `columns`, as sorted JSON texts. */
export function actualMultiset(columns: string[], objects: Record<string, unknown>[]): string[] {
  return objects.map((o) => stringifyJson(Object.fromEntries(columns.map((c) => [c, o[c]])))).sort();
}

/**
 * Snapshots whose manifest list the fixture lacks: `mytable`'s snapshot 7342794868382145167 (sequence
 * number 2) names `snap-7342794868382145167-1-34f7dec7-….avro`, but the folder only has a `-3-` list of
 * a different attempt (sequence number 4, another parent). Its rows cannot be read by any reader.
 */
export const MISSING_MANIFEST_LISTS = ['data/persistent/equality_deletes/warehouse/mydb/mytable@2'];
