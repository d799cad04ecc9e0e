/**
 * The seam through which a key index build (key-index.ts) hands its CPU work — decoding each data
 * file's key column and filling the typed-array table of keys (number-key-table.ts) — to another
 * thread, so that the pipeline's thread keeps routing changes meanwhile (key-index-lifecycle.ts:
 * the writer's lookups of committed rows wait for the index). Only a single `int` / `long` key
 * column takes this path; the caller reads the files and their deletes, the builder only decodes
 * and inserts. Runtime-neutral: the worker-thread builder is worker-key-table.ts, passed in by the
 * caller that wires the pipeline (cli/), like the Parquet encoder pool.
 */
import type { NumberKeyTableState } from './number-key-table.js';

/** The key column as the data files hold it (the current schema's field: its id, name and type). */
export interface IntegerKeyColumn {
  readonly id: number;
  readonly name: string;
  readonly kind: 'int' | 'long';
}

/** One build: the files' rows go in one file at a time, the table comes out at `finish`. */
export interface KeyTableBuild {
  /**
   * The live rows of one data file: `bytes` the whole Parquet file, `slot` the file's slot in the
   * index (the table's first value), `deleted` the positions its deletes remove, ascending. Both
   * arrays are handed over (transferred): the caller must not use them afterwards. Resolves when
   * the builder takes another file (it holds a bounded number in flight).
   */
  add(bytes: Uint8Array, slot: number, deleted: Float64Array | undefined): Promise<void>;
  /**
   * The table of every live row added (key → slot, position), or undefined when a row's key does
   * not fit the table (a null, a long beyond ±(2^53 − 1)) or a file's column is not a plain signed
   * integer column (missing: an initial-default; a dictionary): the caller builds on its own thread.
   */
  finish(): Promise<NumberKeyTableState | undefined>;
  /** Ends the build, its table unwanted. */
  abort(): void;
}

/** Starts a build for a table of about `expectedRows` keys. */
export type KeyTableBuilder = (column: IntegerKeyColumn, expectedRows: number) => KeyTableBuild;
