/**
 * The disk-backed key index (key-index.ts) for tables with more live rows than the memory budget
 * (`iceberg.keyIndex.memoryMaxRows`): one SQLite database per table under the state directory,
 * `<state-dir>/<job id>/<table uuid>.keyindex.sqlite` (better-sqlite3, WAL). SQLite was chosen over
 * LMDB and LevelDB by measurement (docs/key-index-store.md, `npm run bench:key-index-stores`): the
 * most compact of the stores that are not slower on lookups, one file with a `quick_check`, no new
 * native dependency.
 *
 * The lake stays the truth, the database a cache of it that says which state it matches: the
 * `stamp` row holds the table uuid, the key's field ids, the schema id and the snapshot id whose
 * live rows `rows` holds. Each applied delta and its new stamp are one SQLite transaction, so a kill
 * at any moment leaves either the old or the new state, each stamped with the snapshot it matches. A
 * build writes the stamp last: a database without one is an interrupted build (rebuilt).
 *
 * At open (sqlite-index-open.ts) the stamp is checked against the table; the net change since the
 * stamped snapshot is replayed (new data files read, files whose deletes changed re-checked), and
 * anything it cannot follow — a data file it points at no longer live (another writer's rewrite), a
 * different table, key or schema, an unreadable database — answers "rebuild" with the reason.
 *
 * The database file itself (tables, pragmas, statements, stamp row): sqlite-index-file.ts.
 * Tables: `rows(k PRIMARY KEY, file, pos) WITHOUT ROWID` (k: the KeyId — an INTEGER for numeric
 * keys, the canonical TEXT otherwise; the two never compare equal), `files(id, path, deletes)` (the
 * data files rows point at; `deletes` the paths of the delete files that applied to the file when
 * last read, NULL when floe's own commit changed them since — a hint of which files replay must
 * re-check). DataFile objects are not stored: they are re-resolved by path from the table's live
 * data files at open.
 */
import Database from 'better-sqlite3';
import { FloeError } from '../../util/errors.js';
import type { DataFile } from '../spec/data-file.js';
import type { FileScanTask } from '../scan/scan-plan.js';
import type { IndexedRow, KeyIndex, KeyIndexDelta } from './key-index.js';
import type { keyReader } from './key-index-build.js';
import type { KeyId } from './table-key.js';
import { createIndexDatabase, FORMAT, indexStatements, openIndexDatabase, deletesSignature, signature, sqlKey, type FileRow, type StampRow } from './sqlite-index-file.js';

const SUBSYSTEM = 'iceberg.writer';
/** Rows per transaction while building (one fsync each, bounded WAL). */
const BUILD_BATCH = 50_000;

/** What a database must match to be used for a table. */
export interface DiskIndexIdentity {
  tableUuid: string;
  keyFieldIds: readonly number[];
  /**
   * The key columns' types (JSON): what KeyIds depend on. A schema change that leaves them alone
   * (a column added) keeps the index; the schema id is stamped for the record only.
   */
  keyTypes: string;
  schemaId: number;
}

/** The files a landed commit added (what `apply` learns the new deletes of each file from). */
export interface CommittedFiles {
  readonly dataFiles: readonly DataFile[];
  readonly deleteFiles: readonly DataFile[];
}

export class DiskKeyIndex implements KeyIndex {
  readonly kind = 'disk' as const;
  private readonly filesById = new Map<number, DataFile>();
  private readonly idsByPath = new Map<string, number>();
  private nextFileId = 1;
  private count = 0;
  private stamped: bigint | undefined;
  private readonly q: ReturnType<typeof indexStatements>;

  private constructor(
    private readonly db: Database.Database,
    readonly path: string,
  ) {
    this.q = indexStatements(db);
  }

  get snapshotId(): bigint | undefined {
    return this.stamped;
  }

  get size(): number {
    return this.count;
  }

  /** A new, empty, unstamped database at `path` (whatever was there is removed). */
  static create(path: string): DiskKeyIndex {
    return new DiskKeyIndex(createIndexDatabase(path), path);
  }

  foundPos = 0;

  find(k: KeyId): DataFile | undefined {
    const at = this.get(k);
    if (!at) return undefined;
    this.foundPos = at.pos;
    return at.file;
  }

  get(k: KeyId): IndexedRow | undefined {
    const r = this.q.get.get(sqlKey(k));
    if (!r) return undefined;
    const file = this.filesById.get(r.file);
    if (!file) throw new FloeError(SUBSYSTEM, 'internal', `key index ${this.path}: a row points at file id ${r.file}, which the files table does not hold; delete the file to rebuild the index`);
    return { file, pos: r.pos };
  }

  private fileId(file: DataFile, deletes: string | null): number {
    let id = this.idsByPath.get(file.filePath);
    if (id === undefined) {
      id = this.nextFileId++;
      this.q.addFile.run(id, file.filePath, deletes);
      this.idsByPath.set(file.filePath, id);
    }
    this.filesById.set(id, file);
    return id;
  }

  /** Direct changes (a build, tests) are stamped — persisted as a state — with the next `apply`. */
  set(k: KeyId, file: DataFile, pos: number): void {
    this.setWith(k, this.fileId(file, ''), pos);
  }

  private setWith(k: KeyId, fileId: number, pos: number): void {
    const sk = sqlKey(k);
    if (this.q.insert.run(sk, fileId, pos).changes > 0) this.count++;
    else this.q.update.run(fileId, pos, sk);
  }

  delete(k: KeyId): void {
    const sk = sqlKey(k);
    const at = this.q.get.get(sk);
    if (!at) return;
    this.q.del.run(sk);
    this.count--;
    // floe's own commit changed this file's deletes: replay re-checks it
    this.q.fileDeletes.run(null, at.file);
  }

  /** Deletes k only while it still points at (file, pos) — replay of a delete file's positions. */
  private deleteAt(k: KeyId, fileId: number, pos: number): void {
    if (this.q.delAt.run(sqlKey(k), fileId, pos).changes > 0) this.count--;
  }

  /**
   * `committed`: the commit's files. floe's DV commit leaves each file it touched with exactly one
   * DV (a new data file: its DV, or none), so their deletes are known without a scan and a later
   * replay re-checks only files changed after this commit. (A guess that is wrong — another
   * writer's older position or equality deletes on the file — can only differ from the snapshot's
   * deletes, which costs a re-check, never a missed one.)
   */
  apply(delta: KeyIndexDelta, snapshotId: bigint | undefined, committed?: CommittedFiles): void {
    this.transaction(() => {
      for (const k of delta.deleted) this.delete(k);
      delta.forEachSet((k, file, pos) => this.set(k, file, pos));
      if (committed) {
        const dvs = new Map<string, string>();
        for (const d of committed.deleteFiles) if (d.fileFormat === 'PUFFIN' && d.referencedDataFile) dvs.set(d.referencedDataFile, d.filePath);
        for (const f of committed.dataFiles) {
          const id = this.idsByPath.get(f.filePath);
          if (id !== undefined && !dvs.has(f.filePath)) this.q.fileDeletes.run(signature(undefined, [], []), id);
        }
        for (const [path, dv] of dvs) {
          const id = this.idsByPath.get(path);
          if (id !== undefined) this.q.fileDeletes.run(signature(dv, [], []), id);
        }
      }
      this.writeStamp(snapshotId);
    });
  }

  /**
   * floe's compaction: the moved rows set in their new files (which no delete applies to), the
   * removed files dropped from `files` — so that a restart's catch-up does not find a file it
   * points at gone and rebuild — and the stamp, in one transaction.
   */
  rewrite(moved: readonly (readonly [KeyId, DataFile, number])[], removed: readonly string[], added: readonly DataFile[], snapshotId: bigint): void {
    const noDeletes = signature(undefined, [], []);
    this.transaction(() => {
      for (const f of added) this.fileId(f, noDeletes);
      for (const [k, file, pos] of moved) this.setWith(k, this.fileId(file, noDeletes), pos);
      const drop = this.db.prepare<[number]>('DELETE FROM files WHERE id = ?');
      for (const path of removed) {
        const id = this.idsByPath.get(path);
        if (id === undefined) continue;
        drop.run(id);
        this.idsByPath.delete(path);
        this.filesById.delete(id);
      }
      this.writeStamp(snapshotId);
    });
  }

  /** A build reads a file: its rows are as its current deletes leave them. */
  fileRead(task: FileScanTask): void {
    const id = this.idsByPath.get(task.file.filePath);
    if (id === undefined) this.fileId(task.file, deletesSignature(task));
    else this.q.fileDeletes.run(deletesSignature(task), id);
  }

  *entries(): Iterable<readonly [KeyId, DataFile, number]> {
    for (const r of this.db.prepare<[], { k: KeyId; file: number; pos: number }>('SELECT k, file, pos FROM rows').iterate()) yield [r.k, this.filesById.get(r.file)!, r.pos];
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private identity?: DiskIndexIdentity;

  private writeStamp(snapshotId: bigint | undefined): void {
    const id = this.identity!;
    this.q.stamp.run(id.tableUuid, JSON.stringify(id.keyFieldIds), id.keyTypes, id.schemaId, snapshotId === undefined ? '' : String(snapshotId), this.count);
    this.stamped = snapshotId;
  }

  private transaction(fn: () => void): void {
    this.db.transaction(fn)();
  }

  /**
   * Fills a new database with the table's live rows (`fill` calls `set`, batched into
   * transactions) and stamps it with `snapshotId` last.
   */
  static async build(
    path: string,
    identity: DiskIndexIdentity,
    snapshotId: bigint | undefined,
    fill: (set: (k: KeyId, file: DataFile, pos: number) => void, fileRead: (task: FileScanTask) => void) => Promise<void>,
  ): Promise<DiskKeyIndex> {
    const index = DiskKeyIndex.create(path);
    index.identity = identity;
    try {
      let pending = 0;
      index.db.exec('BEGIN');
      await fill(
        (k, file, pos) => {
          index.set(k, file, pos);
          if (++pending >= BUILD_BATCH) {
            index.db.exec('COMMIT');
            index.db.exec('BEGIN');
            pending = 0;
          }
        },
        (task) => index.fileRead(task),
      );
      index.writeStamp(snapshotId);
      index.db.exec('COMMIT');
    } catch (e) {
      if (index.db.inTransaction) index.db.exec('ROLLBACK');
      index.close();
      throw e;
    }
    return index;
  }

  /** Opens an existing database and reads its stamp and files (throws when unreadable). */
  static openExisting(path: string): { index: DiskKeyIndex; stamp: StampRow | undefined; files: FileRow[] } {
    const { db, stamp, files } = openIndexDatabase(path);
    return { index: new DiskKeyIndex(db, path), stamp, files };
  }

  /**
   * Brings an opened database to the table's current state, or says why it cannot (then: rebuild).
   * `live` are the current snapshot's tasks.
   */
  async catchUp(
    stamp: StampRow,
    files: readonly FileRow[],
    identity: DiskIndexIdentity,
    head: bigint | undefined,
    live: readonly FileScanTask[],
    reader: ReturnType<typeof keyReader>,
    ownRewritesOnly = false,
  ): Promise<{ replayedFiles: number } | { stale: string }> {
    if (stamp.format !== FORMAT) return { stale: `format ${stamp.format}, expected ${FORMAT}` };
    if (stamp.table_uuid !== identity.tableUuid) return { stale: `it belongs to table ${stamp.table_uuid}` };
    if (stamp.key_field_ids !== JSON.stringify(identity.keyFieldIds)) return { stale: `key field ids ${stamp.key_field_ids}, the table's are ${JSON.stringify(identity.keyFieldIds)}` };
    if (stamp.key_types !== identity.keyTypes) return { stale: `key types ${stamp.key_types}, the table's are ${identity.keyTypes} (schema ${identity.schemaId})` };
    this.identity = identity;
    this.count = stamp.row_count;
    this.stamped = stamp.snapshot_id === '' ? undefined : BigInt(stamp.snapshot_id);
    const byPath = new Map(live.map((t) => [t.file.filePath, t]));
    const gone: number[] = [];
    for (const f of files) {
      const task = byPath.get(f.path);
      // a file the index may point at is gone (another writer rewrote or removed it): its rows'
      // new places are unknown — never write a DV against it. Unless only floe's own compactions
      // removed files since the stamp (`ownRewritesOnly`: a kill between such a commit and the
      // index following it): every live row of a removed file is then in a file added since,
      // which the replay below reads in full — so the removed files' keys are dropped first.
      if (!task) {
        if (!ownRewritesOnly) return { stale: `data file ${f.path} it points at is no longer live (rewritten by another writer?)` };
        gone.push(f.id);
        continue;
      }
      this.filesById.set(f.id, task.file);
      this.idsByPath.set(f.path, f.id);
      this.nextFileId = Math.max(this.nextFileId, f.id + 1);
    }
    if (this.stamped === head && gone.length === 0) return { replayedFiles: 0 };
    // The net change since the stamped snapshot: data files only added (none removed, checked
    // above), deletes added. New files: their live rows. Files whose deletes changed: keys at
    // positions now deleted are removed while they still point there, live rows set.
    let replayed = 0;
    const stored = new Map(files.map((f) => [f.id, f.deletes]));
    const work: { task: FileScanTask; id: number | undefined; sig: string }[] = [];
    for (const task of live) {
      const id = this.idsByPath.get(task.file.filePath);
      const sig = deletesSignature(task);
      if (id === undefined) work.push({ task, id, sig });
      else if (stored.get(id) !== sig) work.push({ task, id, sig });
    }
    let open = false;
    try {
      this.db.exec('BEGIN');
      open = true;
      if (gone.length > 0) {
        // a scan of `rows` (no index on file): only on this recovery path
        const dropRows = this.db.prepare<[number]>('DELETE FROM rows WHERE file = ?');
        const dropFile = this.db.prepare<[number]>('DELETE FROM files WHERE id = ?');
        for (const id of gone) {
          this.count -= dropRows.run(id).changes;
          dropFile.run(id);
        }
        replayed += gone.length;
      }
      for (const { task, id, sig } of work) {
        replayed++;
        if (id === undefined) {
          const fid = this.fileId(task.file, sig);
          await reader.live(task, (k, pos) => this.setWith(k, fid, pos));
          continue;
        }
        const livePos = new Map<number, KeyId>();
        await reader.live(task, (k, pos) => livePos.set(pos, k));
        await reader.all(task, (k, pos) => {
          if (!livePos.has(pos)) this.deleteAt(k, id, pos);
        });
        for (const [pos, k] of livePos) this.setWith(k, id, pos);
        this.q.fileDeletes.run(sig, id);
      }
      this.writeStamp(head);
      this.db.exec('COMMIT');
      open = false;
    } finally {
      if (open && this.db.inTransaction) this.db.exec('ROLLBACK');
    }
    return { replayedFiles: replayed };
  }
}
