/**
 * What a table's key index is kept with (the table committer's options, from `iceberg.*` of floe's
 * config), and how each index was obtained (tests and logs: a kept index must not be rebuilt).
 */
import type { KeyColumnReader } from './key-column-reader.js';

export interface KeyIndexOptions {
  /**
   * How upserts into format-v3 keyed tables delete the rows they replace: 'deletion-vectors'
   * (default) keeps a key index per table (key-index.ts) and writes DVs only, never an equality
   * delete; 'equality' writes equality deletes as format v2 must.
   */
  upsertDeletes?: 'deletion-vectors' | 'equality';
  /**
   * The ceiling of the key index: a table with more rows than this (the current snapshot's
   * `total-records`) uses equality deletes instead, with a warning. Default 10 million without a
   * `keyIndex.stateDir` (the index then lives in memory only), 1 billion with one (beyond the memory
   * bound it lives on disk).
   */
  keyIndexMaxRows?: number;
  keyIndex?: {
    /**
     * Where indexes persist: a memory index as `<stateDir>/<job id>/<table uuid>.keyindex` (+ `.log`,
     * index-store.ts), a disk one as `<…>.keyindex.sqlite`. Without it every index lives in memory
     * and is built from the lake at each start.
     */
    stateDir?: string;
    /**
     * With a state dir: a table's index stays in memory while it takes at most this many bytes
     * (memory-key-index.ts `memoryBytes`: 8 per key of a sorted run, about 34 per other entry), on
     * disk beyond (default 1 GiB).
     */
    memoryMaxBytes?: number;
    /** With a state dir: and while it holds at most this many live rows (default: no such bound). */
    memoryMaxRows?: number;
    /**
     * With a state dir: a memory index is persisted there once it holds this many rows (index-store.ts;
     * default 100,000 — a smaller one is built in well under a second, and is not worth a file).
     */
    saveMinRows?: number;
  };
  /**
   * Decodes a single integer key column in another thread (key-column-reader.ts; the CLI passes the
   * worker-thread one) when an index is built from the lake: the changes flow meanwhile, their
   * lookups of committed rows waiting for the index (keyed-change-writer.ts).
   */
  keyColumnReader?: KeyColumnReader;
  warn?: (message: string) => void;
  /** Progress of index builds and catch-ups. */
  info?: (message: string) => void;
}

/** How each key index was obtained. */
export interface KeyIndexLoads {
  /** Built from the lake in memory. */
  built: number;
  /** Loaded from its persisted image and log (index-store.ts), the table's head. */
  restored: number;
  /** Loaded so, then caught up with the commits after it from the lake (key-index-catch-up.ts). */
  caughtUp: number;
  builtOnDisk: number;
  /** A disk index reused as it was, or replayed to the head (sqlite-index-open.ts). */
  reused: number;
  replayed: number;
  spilled: number;
  followed: number;
}

export const DEFAULT_MEMORY_MAX_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_SAVE_MIN_ROWS = 100_000;
