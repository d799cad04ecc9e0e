/** Puffin files and v3 deletion vectors: the public surface of `src/iceberg/puffin/`. */
export { PositionBitmap, union } from './position-bitmap.js';
export {
  CARDINALITY_KEY,
  DELETION_VECTOR_V1,
  REFERENCED_DATA_FILE_KEY,
  ROW_POSITION_FIELD_ID,
  deletionVectorFile,
  findDeletionVectorBlob,
  readDeletionVector,
  writeDeletionVectorPuffin,
  type DeletionVectorInput,
  type ReadDeletionVectorOptions,
  type WrittenDeletionVector,
  type WrittenDeletionVectorPuffin,
} from './deletion-vector-file.js';
export { deserializeDeletionVector, serializeDeletionVector } from './deletion-vector.js';
export { readPuffinFooter, writePuffin, type PuffinBlobInput, type PuffinBlobMetadata, type PuffinFileMetadata } from './puffin.js';
export { crc32 } from './crc32.js';
