/**
 * Manifest lists (format/spec.md "Manifest Lists"): one per snapshot (and per commit attempt),
 * listing the snapshot's manifests with the metadata their entries inherit.
 *
 * Writing follows Java's `ManifestListWriter`: manifests new in this commit (no sequence number yet)
 * get the snapshot's sequence number, and their unknown min sequence number too; in v3 every data
 * manifest without a `first_row_id` gets one, in list order, exactly as `V3Writer.prepare` does
 * (docs/iceberg-writer-checklist.md §3.2), and the range they took is the snapshot's `added-rows`. The file's key-value
 * metadata is Java's: `snapshot-id`, `parent-snapshot-id` (the text "null" when there is none),
 * `sequence-number`, `format-version`, and `first-row-id` in v3.
 */
import { FloeError } from '../../util/errors.js';
import { readAvroFile, writeAvroFile, type AvroCodec } from '../avro/container.js';
import type { AvroRecord } from '../avro/schema.js';
import { childRecord, namesById } from './manifest-entry-serde.js';
import type { ManifestFile, PartitionFieldSummary } from './manifest-file.js';
import { icebergSchemaJson, manifestFileType, manifestListAvroSchema, type ManifestFormatVersion } from './manifest-schemas.js';

const SUBSYSTEM = 'iceberg.manifest-list';

export interface WriteManifestListOptions {
  formatVersion: ManifestFormatVersion;
  snapshotId: bigint;
  parentSnapshotId?: bigint;
  /** The snapshot's sequence number for this commit attempt. */
  sequenceNumber: bigint;
  /** v3 (required): the snapshot's `first-row-id` = the table's `next-row-id` at this attempt. */
  firstRowId?: bigint;
  /** Every manifest of the snapshot: carried-over ones as read, new ones as `writeManifest` returned. */
  manifests: readonly ManifestFile[];
  codec?: AvroCodec;
  syncMarker?: Uint8Array;
}

export interface WrittenManifestList {
  bytes: Uint8Array;
  /** The rows as written: sequence numbers and (v3) first row ids assigned. */
  manifests: ManifestFile[];
  /** v3: the snapshot's `added-rows` (row ids assigned by this list). */
  addedRows?: bigint;
  /** v3: the table's `next-row-id` after this snapshot (`firstRowId + addedRows`). */
  nextRowId?: bigint;
}

export function writeManifestList(o: WriteManifestListOptions): WrittenManifestList {
  const v3 = o.formatVersion === 3;
  if (v3 && o.firstRowId === undefined) {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', 'a v3 manifest list needs the snapshot first-row-id (the table next-row-id); pass firstRowId');
  }
  if (!v3 && o.firstRowId !== undefined) {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', `first-row-id is a v3 field; this manifest list is format ${o.formatVersion}`);
  }
  let nextRowId = o.firstRowId ?? 0n;
  const written: ManifestFile[] = [];
  const records = o.manifests.map((m) => {
    const row: ManifestFile = { ...m };
    if (m.sequenceNumber === undefined || m.minSequenceNumber === undefined) {
      // Java V2/V3 ManifestFileWrapper: only a manifest added by this very snapshot may be unassigned.
      if (m.addedSnapshotId !== o.snapshotId) {
        throw new FloeError(SUBSYSTEM, 'invalid-argument', `manifest ${m.path} from snapshot ${m.addedSnapshotId} has no sequence number; only manifests added by snapshot ${o.snapshotId} may be assigned one now`);
      }
      row.sequenceNumber ??= o.sequenceNumber;
      row.minSequenceNumber ??= o.sequenceNumber;
    }
    if (v3) {
      if (m.content !== 'data') {
        delete row.firstRowId; // spec: always null for delete manifests
      } else if (m.firstRowId === undefined) {
        row.firstRowId = nextRowId;
        // Leave room for existing rows too: files from before v3 may lack a first_row_id.
        nextRowId += m.existingRowsCount + m.addedRowsCount;
      }
    } else {
      delete row.firstRowId;
    }
    written.push(row);
    return manifestToRecord(row, v3);
  });

  const metadata = new Map<string, string>([
    ['snapshot-id', String(o.snapshotId)],
    ['parent-snapshot-id', o.parentSnapshotId === undefined ? 'null' : String(o.parentSnapshotId)],
    ['sequence-number', String(o.sequenceNumber)],
  ]);
  if (v3) metadata.set('first-row-id', String(o.firstRowId));
  metadata.set('format-version', String(o.formatVersion));
  metadata.set('iceberg.schema', icebergSchemaJson(manifestFileType(o.formatVersion)));
  const bytes = writeAvroFile({ schema: manifestListAvroSchema(o.formatVersion), metadata, codec: o.codec, syncMarker: o.syncMarker }, records);
  const out: WrittenManifestList = { bytes, manifests: written };
  if (v3) {
    out.addedRows = nextRowId - o.firstRowId!;
    out.nextRowId = nextRowId;
  }
  return out;
}

function checkInt(n: number, what: string, path: string): number {
  if (!Number.isInteger(n) || n < 0 || n > 2 ** 31 - 1) throw new FloeError(SUBSYSTEM, 'invalid-argument', `manifest ${path}: ${what} ${n} is not a non-negative 32-bit integer`);
  return n;
}

function manifestToRecord(m: ManifestFile, v3: boolean): Record<string, unknown> {
  const r: Record<string, unknown> = {
    manifest_path: m.path,
    manifest_length: m.length,
    partition_spec_id: m.specId,
    content: m.content === 'data' ? 0 : m.content === 'deletes' ? 1 : badContent(m),
    sequence_number: m.sequenceNumber,
    min_sequence_number: m.minSequenceNumber,
    added_snapshot_id: m.addedSnapshotId,
    added_files_count: checkInt(m.addedFilesCount, 'added_files_count', m.path),
    existing_files_count: checkInt(m.existingFilesCount, 'existing_files_count', m.path),
    deleted_files_count: checkInt(m.deletedFilesCount, 'deleted_files_count', m.path),
    added_rows_count: m.addedRowsCount,
    existing_rows_count: m.existingRowsCount,
    deleted_rows_count: m.deletedRowsCount,
    partitions: m.partitions
      ? m.partitions.map((p) => ({
          contains_null: p.containsNull,
          contains_nan: p.containsNan ?? null,
          lower_bound: p.lowerBound ?? null,
          upper_bound: p.upperBound ?? null,
        }))
      : null,
    key_metadata: m.keyMetadata ?? null,
  };
  if (v3) r.first_row_id = m.firstRowId ?? null;
  return r;
}

function badContent(m: ManifestFile): never {
  throw new FloeError(SUBSYSTEM, 'invalid-argument', `manifest ${m.path}: content ${JSON.stringify(m.content)} is not "data" or "deletes"`);
}

// ---- reading -------------------------------------------------------------------------------------

interface ManifestListMetadata {
  snapshotId?: bigint;
  parentSnapshotId?: bigint;
  sequenceNumber?: bigint;
  formatVersion?: number;
  firstRowId?: bigint;
}

export interface ReadManifestList {
  metadata: ManifestListMetadata;
  manifests: ManifestFile[];
}

/**
 * Reads a manifest list written by floe, Java or any conforming writer, resolving fields by id
 * (Java ≤ 1.4 named the counts `added_data_files_count` …). v1 lists read with sequence numbers 0
 * and content data (spec "Manifest Lists").
 */
export function readManifestList(bytes: Uint8Array, path = 'manifest list'): ReadManifestList {
  const file = readAvroFile(bytes);
  if (file.schema.type !== 'record') throw new FloeError(SUBSYSTEM, 'invalid-data', `${path}: expected a record schema, found ${file.schema.type}`);
  const schema = file.schema as AvroRecord;
  const names = namesById(schema);
  const summaryNames = names.has(507) ? namesById(summaryRecord(schema)) : new Map<number, string>();
  const manifests = file.records.map((rec) => {
    const r = rec as Record<string, unknown>;
    const get = (id: number): unknown => {
      const n = names.get(id);
      return n === undefined ? undefined : r[n];
    };
    const manifestPath = get(500) as string;
    const need = <T>(id: number, what: string): T => {
      const v = get(id);
      if (v === null || v === undefined) {
        throw new FloeError(SUBSYSTEM, 'invalid-data', `${path}: manifest ${manifestPath} has no ${what} (field ${id}); floe reads manifest lists that record file counts`);
      }
      return v as T;
    };
    const content = (get(517) ?? 0) as number;
    if (content !== 0 && content !== 1) throw new FloeError(SUBSYSTEM, 'invalid-data', `${path}: manifest ${manifestPath} content ${content}: expected 0 (data) or 1 (deletes)`);
    const m: ManifestFile = {
      path: manifestPath,
      length: need<bigint>(501, 'manifest_length'),
      specId: need<number>(502, 'partition_spec_id'),
      content: content === 0 ? 'data' : 'deletes',
      sequenceNumber: (get(515) ?? 0n) as bigint,
      minSequenceNumber: (get(516) ?? 0n) as bigint,
      addedSnapshotId: need<bigint>(503, 'added_snapshot_id'),
      addedFilesCount: need<number>(504, 'added_files_count'),
      existingFilesCount: need<number>(505, 'existing_files_count'),
      deletedFilesCount: need<number>(506, 'deleted_files_count'),
      addedRowsCount: need<bigint>(512, 'added_rows_count'),
      existingRowsCount: need<bigint>(513, 'existing_rows_count'),
      deletedRowsCount: need<bigint>(514, 'deleted_rows_count'),
    };
    const partitions = get(507) as Record<string, unknown>[] | null | undefined;
    if (partitions) {
      m.partitions = partitions.map((p) => {
        const s = (id: number): unknown => {
          const n = summaryNames.get(id);
          return n === undefined ? undefined : p[n];
        };
        const out: PartitionFieldSummary = { containsNull: s(509) as boolean };
        const nan = s(518);
        if (nan !== null && nan !== undefined) out.containsNan = nan as boolean;
        const lo = s(510);
        const hi = s(511);
        if (lo) out.lowerBound = lo as Uint8Array;
        if (hi) out.upperBound = hi as Uint8Array;
        return out;
      });
    }
    const key = get(519);
    if (key) m.keyMetadata = key as Uint8Array;
    const firstRowId = get(520);
    if (firstRowId !== null && firstRowId !== undefined) m.firstRowId = firstRowId as bigint;
    return m;
  });
  const meta = file.metadata;
  const long = (k: string): bigint | undefined => {
    const v = meta.get(k);
    return v !== undefined && /^-?\d+$/.test(v) ? BigInt(v) : undefined;
  };
  const metadata: ManifestListMetadata = {};
  const assign = <K extends keyof ManifestListMetadata>(k: K, v: ManifestListMetadata[K] | undefined): void => {
    if (v !== undefined) metadata[k] = v;
  };
  assign('snapshotId', long('snapshot-id'));
  assign('parentSnapshotId', long('parent-snapshot-id'));
  assign('sequenceNumber', long('sequence-number'));
  assign('firstRowId', long('first-row-id'));
  const fv = meta.get('format-version');
  assign('formatVersion', fv !== undefined ? Number(fv) : undefined);
  return { metadata, manifests };
}

function summaryRecord(schema: AvroRecord): AvroRecord {
  const f = schema.fields.find((x) => x.attrs?.['field-id'] === 507);
  let t = f?.type;
  if (t?.type === 'union') t = t.branches.find((b) => b.type !== 'null');
  if (t?.type === 'array' && t.items.type === 'record') return t.items;
  // Fall back to the generic lookup for an error that names the field.
  return childRecord(schema, 507, 'manifest_file partitions');
}
