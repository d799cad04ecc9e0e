/**
 * The seam through which a key index build from the lake (key-index-build.ts) hands its CPU work —
 * decoding each data file's key column — to another thread, so that the pipeline's thread keeps
 * routing changes meanwhile (key-index-lifecycle.ts: the writer's lookups of committed rows wait
 * for the index). Only a single `int` / `long` key column takes this path; the caller reads the
 * files and their deletes, the reader only decodes. Runtime-neutral: the worker-thread reader is
 * worker-key-column.ts, passed in by the caller that wires the pipeline (cli/), like the Parquet
 * encoder pool.
 */

/** The key column as the data files hold it (the current schema's field: its id, name and type). */
export interface IntegerKeyColumn {
  readonly id: number;
  readonly name: string;
  readonly kind: 'int' | 'long';
}

/** One build's reader: files go in one at a time, each file's keys by position come out. */
export interface KeyColumnRead {
  /**
   * The keys of one data file by position (NaN at the positions `deleted` removes): `bytes` the
   * whole Parquet file, `deleted` ascending. Both arrays are handed over (transferred): the caller
   * must not use them afterwards. Undefined when a live row's key is not a number within
   * ±(2^53 − 1) (a null) or the file's column is not a plain signed integer column (missing: an
   * initial-default; a dictionary): the caller reads that file on its own thread.
   */
  read(bytes: Uint8Array, recordCount: number, deleted: Float64Array | undefined): Promise<Float64Array | undefined>;
  /** Ends the reader (its thread). */
  close(): void;
}

/** Starts a reader for the key column of one build. */
export type KeyColumnReader = (column: IntegerKeyColumn) => KeyColumnRead;
