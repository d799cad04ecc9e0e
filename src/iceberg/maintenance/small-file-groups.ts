/**
 * Which small data files a compaction bin-packs together (Java `SizeBasedFileRewritePlanner` /
 * `BinPackRewriteFilePlanner`, core/src/main/java/org/apache/iceberg/actions/): streaming at a short
 * commit interval leaves one small file per commit per partition, and a reader opens every one.
 *
 * Per partition (the data file's spec id + partition tuple — files of different partitions are never
 * merged, as Java's planner groups by partition first), the files smaller than `minFileSizeBytes`
 * (Java `min-file-size-bytes`, default 75% of the target) are packed, in the order the scan lists
 * them, into groups of at most `maxFileGroupSizeBytes` (`max-file-group-size-bytes`, default
 * 100 GiB); a group is rewritten when it has at least `minInputFiles` files (`min-input-files`,
 * default 5) or more bytes than one target file (Java's `enoughInputFiles` / `enoughContent`,
 * both only for groups of two files or more: one small file rewritten alone stays one small file).
 * Files larger than the target are left alone here (Java splits those above 180% of it; floe's
 * writer rolls at the target, so it never makes them).
 */
import type { FileScanTask } from '../scan/scan-plan.js';
import type { DataFile } from '../spec/data-file.js';

/** Java `SizeBasedFileRewritePlanner` defaults. */
const MIN_FILE_SIZE_DEFAULT_RATIO = 0.75;
export const MIN_INPUT_FILES_DEFAULT = 5;
const MAX_FILE_GROUP_SIZE_BYTES_DEFAULT = 100 * 1024 * 1024 * 1024;

export interface SmallFileOptions {
  /** Files below this size are small (default: 75% of `targetFileSizeBytes`). */
  readonly minFileSizeBytes?: number;
  /** A group is rewritten when it has at least this many files (default 5). */
  readonly minInputFiles?: number;
  /** Bytes of input per group at most (default 100 GiB). */
  readonly maxFileGroupSizeBytes?: number;
}

export interface SmallFileGroup {
  /** The partition the files share (spec id / partition tuple as text). */
  readonly partition: string;
  readonly tasks: readonly FileScanTask[];
  readonly bytes: number;
}

/** The groups of small files worth rewriting; `targetFileSizeBytes` is the table's data file target. */
export function planSmallFileGroups(tasks: readonly FileScanTask[], targetFileSizeBytes: number, options: SmallFileOptions = {}): SmallFileGroup[] {
  const minSize = options.minFileSizeBytes ?? Math.floor(targetFileSizeBytes * MIN_FILE_SIZE_DEFAULT_RATIO);
  const minInput = Math.max(1, options.minInputFiles ?? MIN_INPUT_FILES_DEFAULT);
  const maxGroup = options.maxFileGroupSizeBytes ?? MAX_FILE_GROUP_SIZE_BYTES_DEFAULT;
  const byPartition = new Map<string, FileScanTask[]>();
  for (const t of tasks) {
    if (Number(t.file.fileSizeInBytes) >= minSize) continue;
    const p = partitionOf(t.file);
    let list = byPartition.get(p);
    if (!list) byPartition.set(p, (list = []));
    list.push(t);
  }
  const out: SmallFileGroup[] = [];
  for (const [partition, list] of byPartition) {
    // greedy sequential packing: a file that does not fit closes the group
    let group: FileScanTask[] = [];
    let bytes = 0;
    const close = (): void => {
      const enoughInputFiles = group.length > 1 && group.length >= minInput;
      const enoughContent = group.length > 1 && bytes > targetFileSizeBytes;
      if (enoughInputFiles || enoughContent) out.push({ partition, tasks: group, bytes });
      group = [];
      bytes = 0;
    };
    for (const t of list) {
      const size = Number(t.file.fileSizeInBytes);
      if (group.length > 0 && bytes + size > maxGroup) close();
      group.push(t);
      bytes += size;
    }
    if (group.length > 0) close();
  }
  return out;
}

/** A data file's spec and partition tuple as text, to group the files of one partition. */
export function partitionOf(file: DataFile): string {
  const text = (v: unknown): string => (v instanceof Uint8Array ? `x${Array.from(v, (b) => b.toString(16).padStart(2, '0')).join('')}` : v === null || v === undefined ? 'null' : `${typeof v}:${String(v)}`);
  return `${file.specId}/${file.partition.map(text).join('/')}`;
}
