/**
 * Deletion-vector Puffin files as format v3 uses them (spec "Deletion Vectors", docs/iceberg-writer-checklist.md §4.5;
 * Java `BaseDVFileWriter`): one `deletion-vector-v1` blob per data file, with
 * `fields = [2147483645]` (the `_pos` metadata column), snapshot id and sequence number -1 (inherited),
 * no compression, and the properties `referenced-data-file` and `cardinality`.
 *
 * Each DV becomes a delete-manifest entry (`deletionVectorFile`): content position-deletes, format
 * PUFFIN, the Puffin path and whole-file size, record_count = cardinality, and content_offset /
 * content_size_in_bytes equal to the blob's offset and length, which readers check (icebird, Java).
 *
 * Merging a new DV with the data file's previous DV (or v2 position deletes) is the caller's job —
 * at most one DV per data file per snapshot (spec) — with `PositionBitmap.union`.
 */
import { FloeError } from '../../util/errors.js';
import type { Value } from '../../model/values.js';
import type { DataFile } from '../spec/data-file.js';
import { deserializeDeletionVector, serializeDeletionVector } from './deletion-vector.js';
import { PositionBitmap } from './position-bitmap.js';
import { readPuffinFooter, writePuffin, type PuffinBlobMetadata } from './puffin.js';

const SUBSYSTEM = 'iceberg.puffin';
const DELETION_VECTOR_V1 = 'deletion-vector-v1';
/** Field id of the reserved `_pos` metadata column (spec "Reserved Field IDs"). */
const ROW_POSITION_FIELD_ID = 2147483645;
const REFERENCED_DATA_FILE_KEY = 'referenced-data-file';
const CARDINALITY_KEY = 'cardinality';

export interface DeletionVectorInput {
  /** The data file's path exactly as its manifest entry has it. */
  referencedDataFile: string;
  positions: PositionBitmap | Iterable<bigint | number>;
}

export interface WrittenDeletionVector {
  referencedDataFile: string;
  /** Blob offset and length in the Puffin file = the manifest's content_offset / content_size_in_bytes. */
  offset: bigint;
  length: bigint;
  /** Distinct deleted positions = the manifest's record_count. */
  cardinality: bigint;
}

export interface WrittenDeletionVectorPuffin {
  bytes: Uint8Array;
  /** = file_size_in_bytes of every DV entry from this file. */
  fileSizeInBytes: bigint;
  vectors: WrittenDeletionVector[];
}

/** Writes one Puffin file holding a DV per input, in input order. */
export function writeDeletionVectorPuffin(
  inputs: readonly DeletionVectorInput[],
  options: { createdBy?: string } = {},
): WrittenDeletionVectorPuffin {
  const seen = new Set<string>();
  const blobs = inputs.map((dv) => {
    if (seen.has(dv.referencedDataFile)) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `two deletion vectors for ${dv.referencedDataFile} in one Puffin file; merge them (at most one DV per data file per snapshot)`);
    }
    seen.add(dv.referencedDataFile);
    const bitmap = dv.positions instanceof PositionBitmap ? dv.positions : PositionBitmap.of(dv.positions);
    const cardinality = bitmap.cardinality;
    if (cardinality === 0n) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `deletion vector for ${dv.referencedDataFile} has no positions; write none instead of an empty DV`);
    }
    return {
      type: DELETION_VECTOR_V1,
      fields: [ROW_POSITION_FIELD_ID],
      snapshotId: -1n,
      sequenceNumber: -1n,
      data: serializeDeletionVector(bitmap),
      properties: { [REFERENCED_DATA_FILE_KEY]: dv.referencedDataFile, [CARDINALITY_KEY]: cardinality.toString() },
      cardinality,
    };
  });
  const { bytes, blobs: metas } = writePuffin(blobs, { 'created-by': options.createdBy ?? 'floe' });
  return {
    bytes,
    fileSizeInBytes: BigInt(bytes.length),
    vectors: metas.map((m, i) => ({
      referencedDataFile: inputs[i]!.referencedDataFile,
      offset: m.offset,
      length: m.length,
      cardinality: blobs[i]!.cardinality,
    })),
  };
}

export interface ReadDeletionVectorOptions {
  /** The manifest's record_count: checked against the DV's cardinality, as Java does. */
  expectedCardinality?: bigint;
  /** Names the DV in errors (e.g. the Puffin path). */
  what?: string;
}

/**
 * Reads the DV blob at [offset, offset + length) of `bytes` (the whole Puffin file, or any buffer
 * the range indexes), checking length prefix, magic, CRC and optionally the cardinality.
 */
export function readDeletionVector(bytes: Uint8Array, offset: bigint | number, length: bigint | number, options: ReadDeletionVectorOptions = {}): PositionBitmap {
  const what = options.what ?? 'deletion vector';
  const start = Number(offset);
  const len = Number(length);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(len) || start < 0 || len < 0 || start + len > bytes.length) {
    throw new FloeError(SUBSYSTEM, 'invalid-data', `${what}: blob range [${offset}, +${length}) is outside the ${bytes.length}-byte file; content_offset/content_size_in_bytes do not match the Puffin file`);
  }
  const bitmap = deserializeDeletionVector(bytes.subarray(start, start + len), what);
  if (options.expectedCardinality !== undefined) {
    const c = bitmap.cardinality;
    if (c !== options.expectedCardinality) {
      throw new FloeError(SUBSYSTEM, 'invalid-data', `${what}: holds ${c} positions, its manifest entry's record_count is ${options.expectedCardinality}`);
    }
  }
  return bitmap;
}

/**
 * Finds the DV blob of `referencedDataFile` in a Puffin file's footer and checks that it sits at
 * the manifest's offset/length (icebird and Java require equality).
 */
export function findDeletionVectorBlob(bytes: Uint8Array, referencedDataFile: string, what = 'Puffin file'): PuffinBlobMetadata {
  const footer = readPuffinFooter(bytes, what);
  const blob = footer.blobs.find((b) => b.type === DELETION_VECTOR_V1 && b.properties[REFERENCED_DATA_FILE_KEY] === referencedDataFile);
  if (!blob) throw new FloeError(SUBSYSTEM, 'not-found', `${what}: no ${DELETION_VECTOR_V1} blob references ${referencedDataFile}`);
  if (blob.compressionCodec !== undefined) throw new FloeError(SUBSYSTEM, 'invalid-data', `${what}: the DV for ${referencedDataFile} is compressed (${blob.compressionCodec}); deletion-vector-v1 must not be`);
  return blob;
}

/** The delete-manifest file entry for one DV (Java `BaseDVFileWriter.createDV`). */
export function deletionVectorFile(args: {
  puffinPath: string;
  fileSizeInBytes: bigint;
  vector: WrittenDeletionVector;
  /** Spec id and partition tuple of the referenced data file. */
  specId: number;
  partition: Value[];
}): DataFile {
  return {
    content: 'position-deletes',
    filePath: args.puffinPath,
    fileFormat: 'PUFFIN',
    specId: args.specId,
    partition: args.partition,
    recordCount: args.vector.cardinality,
    fileSizeInBytes: args.fileSizeInBytes,
    referencedDataFile: args.vector.referencedDataFile,
    contentOffset: args.vector.offset,
    contentSizeInBytes: args.vector.length,
  };
}
