/** The Avro codec: the public surface of `src/iceberg/avro/`. */
export { AvroReader, AvroWriter } from './binary.js';
export { readAvroFile, writeAvroFile, type AvroCodec, type AvroFile, type AvroFileWriteOptions } from './container.js';
export { compileDecoder, compileEncoder, type DatumDecoder, type DatumEncoder } from './datum.js';
export { avroToPrimitive, decimalRequiredBytes, primitiveToAvro, sanitizeAvroName, structToAvro } from './iceberg-schema.js';
export { fromAvroValue, toAvroValue } from './iceberg-values.js';
export {
  fieldId,
  optional,
  parseSchema,
  schemaToJson,
  schemaToJsonValue,
  unwrapOptional,
  type AvroArray,
  type AvroField,
  type AvroFixed,
  type AvroMap,
  type AvroRecord,
  type AvroSchema,
  type AvroUnion,
} from './schema.js';
