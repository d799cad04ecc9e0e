/**
 * Whether a partition spec or sort order fits a schema (Java `PartitionSpec.checkCompatibility`,
 * `SortOrder.checkCompatibility`), and Java's equivalence rules that decide when an added spec, order or
 * schema reuses an existing id (spec "Partitioning": writers must not create a new spec when a
 * compatible one exists).
 */
import { FloeError } from '../../util/errors.js';
import { stringifyJson } from '../../util/json.js';
import { parseTransform, transformToString, type PartitionSpec } from './partition.js';
import type { Schema } from './schema.js';
import { schemaToJson } from './schema-json.js';
import type { SortOrder } from './table-metadata.js';
import { canTransform } from './transforms.js';
import { typeToString } from './types.js';

function invalid(message: string): FloeError {
  return new FloeError('iceberg.metadata-builder', 'invalid-argument', message);
}

export function checkSpecCompatibility(spec: PartitionSpec, schema: Schema): void {
  const names = new Set<string>();
  for (const f of spec.fields) {
    if (names.has(f.name)) throw invalid(`partition spec ${spec.specId}: field name ${f.name} is used twice`);
    names.add(f.name);
    const source = schema.findField(f.sourceId);
    if (!source) {
      // a v1 table keeps dropped partition columns as void transforms
      if (f.transform.kind === 'void') continue;
      throw invalid(`partition field ${f.name}: cannot find source column ${f.sourceId} in schema ${schema.schemaId}`);
    }
    if (!canTransform(f.transform, source.type)) {
      throw invalid(`partition field ${f.name}: invalid source type ${typeToString(source.type)} for transform ${transformToString(f.transform)}`);
    }
  }
}

export function checkSortOrderCompatibility(order: SortOrder, schema: Schema): void {
  for (const f of order.fields) {
    const source = schema.findField(f.sourceId);
    if (!source) throw invalid(`sort order ${order.orderId}: cannot find source column ${f.sourceId} in schema ${schema.schemaId}`);
    if (!canTransform(parseTransform(f.transform), source.type)) {
      throw invalid(`sort order ${order.orderId}: invalid source type ${typeToString(source.type)} for transform ${f.transform}`);
    }
  }
}

/** Java `PartitionSpec.compatibleWith`: same fields in order by source id, transform and name (ids aside). */
export function specsCompatible(a: PartitionSpec, b: PartitionSpec): boolean {
  return (
    a.fields.length === b.fields.length &&
    a.fields.every((f, i) => {
      const g = b.fields[i]!;
      return f.sourceId === g.sourceId && f.name === g.name && transformToString(f.transform) === transformToString(g.transform);
    })
  );
}

/** Java `SortOrder.sameOrder`: the same fields (order ids aside). */
export function sameSortOrder(a: SortOrder, b: SortOrder): boolean {
  return (
    a.fields.length === b.fields.length &&
    a.fields.every((f, i) => {
      const g = b.fields[i]!;
      return f.sourceId === g.sourceId && f.transform === g.transform && f.direction === g.direction && f.nullOrder === g.nullOrder;
    })
  );
}

/** Java `Schema.sameSchema`: equal fields (ids, names, types, docs, defaults) and identifier fields. */
export function sameSchema(a: Schema, b: Schema): boolean {
  const text = (s: Schema): string => {
    const { 'schema-id': _id, ...rest } = schemaToJson(s);
    return stringifyJson({ ...rest, 'identifier-field-ids': [...s.identifierFieldIds].sort((x, y) => x - y) });
  };
  return text(a) === text(b);
}
