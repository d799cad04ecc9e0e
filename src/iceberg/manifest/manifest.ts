/**
 * Manifest files (format/spec.md "Manifests"): writing one manifest of data or delete files for one
 * partition spec, and reading one back with sequence-number and first-row-id inheritance applied.
 *
 * Writing follows Java's `ManifestWriter`: ADDED entries leave `snapshot_id`, `sequence_number`
 * (unless the caller gives an explicit older data sequence number) and `file_sequence_number` null,
 * so the manifest can be reused unchanged when a commit is retried with a new sequence number (spec
 * "Sequence Number Inheritance"; ClickHouse#120031). EXISTING and DELETED entries carry both sequence
 * numbers explicitly; DELETED entries get the writing snapshot's id as Java's `delete(entry)` does.
 * Deviation from Java: Java writes the snapshot id into ADDED entries too; floe leaves it to
 * inheritance, which every reader applies (spec: "Inherited when null"), so a retry may even change
 * the snapshot id.
 *
 * The file's key-value metadata is the spec's (`schema` = the TABLE schema JSON, `schema-id`,
 * `partition-spec` = the fields array, `partition-spec-id`, `format-version`, `content`), plus
 * Java's `iceberg.schema` (the manifest's own schema as Iceberg JSON).
 */
import { FloeError } from '../../util/errors.js';
import { parseJson, stringifyJson } from '../../util/json.js';
import { writeAvroFile, readAvroFile, type AvroCodec } from '../avro/container.js';
import type { AvroRecord } from '../avro/schema.js';
import type { ManifestEntry } from '../spec/data-file.js';
import { childRecord, dataFileToRecord, ManifestEntryReader, partitionLayout, statusCode, validateDataFile, type PartitionFieldLayout } from './manifest-entry-serde.js';
import type { ManifestContent, ManifestFile } from './manifest-file.js';
import { icebergSchemaJson, manifestEntryAvroSchema, manifestEntryType, type ManifestFormatVersion } from './manifest-schemas.js';
import { PartitionSummaryBuilder } from './manifest-summary.js';
import { partitionType, type PartitionSpec } from '../spec/partition.js';
import type { Schema } from '../spec/schema.js';
import { partitionFieldsToJson, partitionSpecFromJson, schemaToJson } from '../spec/schema-json.js';
import type { PrimitiveType } from '../spec/types.js';

const SUBSYSTEM = 'iceberg.manifest';

export interface WriteManifestOptions {
  formatVersion: ManifestFormatVersion;
  /** The table schema the entries were written with (stored as the manifest's `schema`). */
  schema: Schema;
  spec: PartitionSpec;
  content: ManifestContent;
  entries: readonly ManifestEntry[];
  /** Id of the snapshot this manifest is written for (`added_snapshot_id` in the manifest list). */
  snapshotId: bigint;
  /** Where the manifest will be stored (absolute URI); copied into the returned ManifestFile. */
  path: string;
  codec?: AvroCodec;
  keyMetadata?: Uint8Array;
  /** Fixed sync marker, for byte-reproducible tests. */
  syncMarker?: Uint8Array;
}

export interface WrittenManifest {
  /** The complete Avro file. */
  bytes: Uint8Array;
  /**
   * The manifest-list row for it: exact length, counts, partition summaries, and
   * `minSequenceNumber` when some live entry has an explicit data sequence number. `sequenceNumber`
   * and `firstRowId` are left for the manifest-list writer to assign.
   */
  manifest: ManifestFile;
}

export function writeManifest(o: WriteManifestOptions): WrittenManifest {
  const { formatVersion, spec, schema } = o;
  if (o.content !== 'data' && o.content !== 'deletes') {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', `manifest content ${JSON.stringify(o.content)}: expected "data" or "deletes"`);
  }
  const pType = partitionType(spec, schema);
  const avroSchema = manifestEntryAvroSchema(formatVersion, pType);
  const summary = new PartitionSummaryBuilder(pType.fields.map((f) => f.type as PrimitiveType));
  let addedFiles = 0;
  let existingFiles = 0;
  let deletedFiles = 0;
  let addedRows = 0n;
  let existingRows = 0n;
  let deletedRows = 0n;
  let minSeq: bigint | undefined;
  const seenLive = new Set<string>();

  const records = o.entries.map((entry) => {
    const file = entry.dataFile;
    const where = `manifest ${o.path}: entry for ${file.filePath}`;
    const fail = (msg: string): never => {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `${where}: ${msg}`);
    };
    // Spec: a manifest holds data files or delete files, never both, and one partition spec.
    if ((o.content === 'data') !== (file.content === 'data')) fail(`a ${file.content} file cannot go into a ${o.content} manifest`);
    if (file.specId !== spec.specId) fail(`file was written with partition spec ${file.specId}, the manifest is for spec ${spec.specId}`);
    validateDataFile(file, formatVersion, entry.status);

    let snapshotId: bigint | null;
    let seq: bigint | null;
    let fileSeq: bigint | null;
    switch (entry.status) {
      case 'added':
        if (entry.snapshotId !== undefined && entry.snapshotId !== o.snapshotId) {
          fail(`an ADDED entry belongs to the writing snapshot ${o.snapshotId}, found snapshot id ${entry.snapshotId}`);
        }
        if (entry.fileSequenceNumber !== undefined) {
          fail('the file sequence number of an ADDED entry is assigned at commit (inherited); leave it unset');
        }
        snapshotId = null;
        seq = entry.sequenceNumber ?? null; // explicit only for data that logically belongs to an older sequence number
        fileSeq = null;
        addedFiles++;
        addedRows += file.recordCount;
        break;
      case 'existing':
        if (entry.snapshotId === undefined || entry.sequenceNumber === undefined || entry.fileSequenceNumber === undefined) {
          fail('an EXISTING entry must carry its snapshot id, data sequence number and file sequence number (spec "Manifest Entry Fields")');
        }
        snapshotId = entry.snapshotId!;
        seq = entry.sequenceNumber!;
        fileSeq = entry.fileSequenceNumber!;
        existingFiles++;
        existingRows += file.recordCount;
        break;
      case 'deleted':
        if (entry.sequenceNumber === undefined || entry.fileSequenceNumber === undefined) {
          fail('a DELETED entry must carry its data and file sequence numbers (spec "Manifest Entry Fields")');
        }
        snapshotId = o.snapshotId; // the snapshot that deletes the file (Java ManifestWriter.delete)
        seq = entry.sequenceNumber!;
        fileSeq = entry.fileSequenceNumber!;
        deletedFiles++;
        deletedRows += file.recordCount;
        break;
      default:
        return fail(`status ${JSON.stringify(entry.status)}: expected added, existing or deleted`);
    }
    if (entry.status !== 'deleted') {
      // Spec "Snapshots": a file may be live at most once in a snapshot. Deletion vectors are told apart
      // by their blob offset: several DVs share one Puffin file (Java `DeleteFileSet`, `BaseDVFileWriter`).
      const liveKey = file.contentOffset === undefined ? file.filePath : `${file.filePath}#${file.contentOffset}`;
      if (seenLive.has(liveKey)) fail('the same file is live twice in one manifest');
      seenLive.add(liveKey);
      if (seq !== null && (minSeq === undefined || seq < minSeq)) minSeq = seq;
    }
    summary.update(file.partition);
    return {
      status: statusCode(entry.status),
      snapshot_id: snapshotId,
      sequence_number: seq,
      file_sequence_number: fileSeq,
      data_file: dataFileToRecord(file, formatVersion, pType),
    };
  });

  const entryStruct = manifestEntryType(formatVersion, pType);
  const metadata: [string, string][] = [
    ['schema', stringifyJson(schemaToJson(schema))],
    ['schema-id', String(schema.schemaId)],
    ['partition-spec', stringifyJson(partitionFieldsToJson(spec))],
    ['partition-spec-id', String(spec.specId)],
    ['format-version', String(formatVersion)],
    ['content', o.content],
    ['iceberg.schema', icebergSchemaJson(entryStruct)],
  ];
  const bytes = writeAvroFile({ schema: avroSchema, metadata: new Map(metadata), codec: o.codec, syncMarker: o.syncMarker }, records);

  const manifest: ManifestFile = {
    path: o.path,
    length: BigInt(bytes.length),
    specId: spec.specId,
    content: o.content,
    addedSnapshotId: o.snapshotId,
    addedFilesCount: addedFiles,
    existingFilesCount: existingFiles,
    deletedFilesCount: deletedFiles,
    addedRowsCount: addedRows,
    existingRowsCount: existingRows,
    deletedRowsCount: deletedRows,
  };
  if (minSeq !== undefined) manifest.minSequenceNumber = minSeq;
  const partitions = summary.summaries();
  if (partitions) manifest.partitions = partitions;
  if (o.keyMetadata) manifest.keyMetadata = o.keyMetadata;
  return { bytes, manifest };
}

// ---- reading -------------------------------------------------------------------------------------

interface ManifestPartitionField {
  fieldId: number;
  name: string;
  /** Transform text as written (`identity`, `bucket[16]`, …), when the spec metadata is present. */
  transform?: string;
  sourceId?: number;
  /** Result type, from the Avro schema of the partition record. */
  type: PrimitiveType;
}

interface ManifestMetadata {
  /** 1 when the file does not say (v1 writers may omit it). */
  formatVersion: number;
  content: ManifestContent;
  /** The table schema JSON text stored in the manifest (`schema`). */
  schemaJson?: string;
  schemaId?: number;
  specId?: number;
  /** The partition fields JSON text (`partition-spec`). */
  partitionSpecJson?: string;
  /** Partition fields in spec order, with their result types. */
  partitionFields: ManifestPartitionField[];
}

export interface ReadManifest {
  metadata: ManifestMetadata;
  /**
   * Entries in file order (DELETED ones included). With a manifest-list row given, inheritance is
   * applied: null snapshot ids, sequence numbers and (v3) first row ids are filled in and `specId`
   * comes from the row; without one, entries are as written.
   */
  entries: ManifestEntry[];
}

/**
 * Reads a manifest written by floe, Java, PyIceberg or any spec-conforming writer. Fields are
 * resolved by field id; partition values are converted from their Avro form to the value model.
 */
export function readManifest(bytes: Uint8Array, manifest?: ManifestFile): ReadManifest {
  const file = readAvroFile(bytes);
  if (file.schema.type !== 'record') {
    throw new FloeError(SUBSYSTEM, 'invalid-data', `manifest${manifest ? ' ' + manifest.path : ''}: expected a record schema, found ${file.schema.type}`);
  }
  const entrySchema = file.schema as AvroRecord;
  const meta = file.metadata;
  const formatVersion = meta.has('format-version') ? Number(meta.get('format-version')) : 1;
  const contentText = meta.get('content') ?? 'data';
  if (contentText !== 'data' && contentText !== 'deletes') {
    throw new FloeError(SUBSYSTEM, 'invalid-data', `manifest content metadata ${JSON.stringify(contentText)}: expected "data" or "deletes"`);
  }
  const fileRecord = childRecord(entrySchema, 2, 'manifest entry data_file');
  const layout: PartitionFieldLayout[] = partitionLayout(childRecord(fileRecord, 102, 'data_file partition'));
  const specIdText = meta.get('partition-spec-id');
  const specId = specIdText !== undefined ? Number(specIdText) : undefined;
  const specJson = meta.get('partition-spec');
  const partitionFields = describePartition(specJson, specId ?? 0, layout);
  const schemaJson = meta.get('schema');
  let schemaId = meta.has('schema-id') ? Number(meta.get('schema-id')) : undefined;
  if (schemaId === undefined && schemaJson) {
    // Java and PyIceberg do not write schema-id; the id inside the schema JSON is the same thing.
    const parsed = parseJson(schemaJson) as { 'schema-id'?: number };
    if (typeof parsed?.['schema-id'] === 'number') schemaId = parsed['schema-id'];
  }
  const metadata: ManifestMetadata = { formatVersion, content: contentText, partitionFields };
  if (schemaJson !== undefined) metadata.schemaJson = schemaJson;
  if (schemaId !== undefined) metadata.schemaId = schemaId;
  if (specId !== undefined) metadata.specId = specId;
  if (specJson !== undefined) metadata.partitionSpecJson = specJson;

  const reader = new ManifestEntryReader(
    entrySchema,
    partitionFields.map((f) => f.fieldId),
    layout,
  );
  const entrySpecId = manifest?.specId ?? specId ?? 0;
  const entries = file.records.map((r) => reader.read(r as Record<string, unknown>, entrySpecId));
  if (manifest) inherit(entries, manifest);
  return { metadata, entries };
}

/** Partition fields in spec order: from the `partition-spec` metadata when present, else the Avro order. */
function describePartition(specJson: string | undefined, specId: number, layout: PartitionFieldLayout[]): ManifestPartitionField[] {
  const byId = new Map(layout.map((l) => [l.fieldId, l]));
  if (specJson === undefined) return layout.map((l) => ({ fieldId: l.fieldId, name: l.avroName, type: l.type }));
  let spec: PartitionSpec;
  try {
    spec = partitionSpecFromJson(parseJson(specJson), specId);
  } catch {
    // A transform floe does not model (multi-argument, engine-specific): the values are still
    // readable by field id, in the partition record's order, which Java writes in spec order.
    return layout.map((l) => ({ fieldId: l.fieldId, name: l.avroName, type: l.type }));
  }
  return spec.fields.map((pf) => {
    const l = byId.get(pf.fieldId);
    if (!l) {
      throw new FloeError(SUBSYSTEM, 'invalid-data', `manifest partition spec names field ${pf.name} (id ${pf.fieldId}), which the partition record of the file lacks`);
    }
    const transform = pf.transform.kind === 'bucket' ? `bucket[${pf.transform.n}]` : pf.transform.kind === 'truncate' ? `truncate[${pf.transform.width}]` : pf.transform.kind;
    return { fieldId: pf.fieldId, name: pf.name, transform, sourceId: pf.sourceId, type: l.type };
  });
}

/**
 * Spec "Sequence Number Inheritance" and "First Row ID Inheritance", as Java's
 * `InheritableMetadataFactory` and `ManifestReader.idAssigner` apply them.
 */
function inherit(entries: ManifestEntry[], manifest: ManifestFile): void {
  // An uncommitted manifest (its row not yet in a written list) has nothing to hand down yet.
  const seq = manifest.sequenceNumber;
  let nextRowId = manifest.firstRowId;
  for (const e of entries) {
    if (e.snapshotId === undefined) e.snapshotId = manifest.addedSnapshotId;
    if (seq !== undefined) {
      // v1 manifests (sequence number 0) default everything to 0; otherwise only ADDED entries inherit.
      if (e.sequenceNumber === undefined && (seq === 0n || e.status === 'added')) e.sequenceNumber = seq;
      if (e.fileSequenceNumber === undefined && (seq === 0n || e.status === 'added')) e.fileSequenceNumber = seq;
    }
    if (e.status !== 'added' && (e.sequenceNumber === undefined || e.fileSequenceNumber === undefined)) {
      throw new FloeError(
        SUBSYSTEM,
        'invalid-data',
        `manifest ${manifest.path}: ${e.status.toUpperCase()} entry for ${e.dataFile.filePath} has no sequence number; only ADDED entries may inherit one (spec "Manifest Entry Fields")`,
      );
    }
    if (manifest.content === 'data') {
      if (nextRowId !== undefined) {
        // Java skips DELETED entries (the spec's wording counts all preceding data files; deleted
        // entries carry an explicit first_row_id when written by a conforming writer).
        if (e.status !== 'deleted' && e.dataFile.content === 'data' && e.dataFile.firstRowId === undefined) {
          e.dataFile.firstRowId = nextRowId;
          nextRowId += e.dataFile.recordCount;
        }
      } else if (seq !== undefined) {
        // A committed manifest without a first row id (from before an upgrade to v3): Java clears
        // every entry's first row id rather than trust it.
        delete e.dataFile.firstRowId;
      }
    }
    e.dataFile.specId = manifest.specId;
  }
}
