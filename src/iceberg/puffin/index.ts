/** Puffin files and v3 deletion vectors: the public surface of `src/iceberg/puffin/`. */
export { PositionBitmap, union } from './position-bitmap.js';
export {
  
  
  
  
  deletionVectorFile,
  findDeletionVectorBlob,
  readDeletionVector,
  writeDeletionVectorPuffin,
  
  
  
  
} from './deletion-vector-file.js';
export { deserializeDeletionVector, serializeDeletionVector } from './deletion-vector.js';
export { readPuffinFooter,     } from './puffin.js';
;
