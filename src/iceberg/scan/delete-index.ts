/**
 * Which delete files apply to which data file (spec "Scan Planning"; Java `DeleteFileIndex`):
 *
 * - an equality delete applies to data with a strictly lower data sequence number, in the same spec
 *   and partition — or in every partition when the delete file's spec is unpartitioned (no fields,
 *   or only void ones: Java `PartitionSpec.isUnpartitioned`), a global delete;
 * - a v2 position-delete file applies to data with a lower or equal data sequence number, in the same
 *   spec and partition, and only to its `referenced_data_file` when that is set;
 * - a v3 deletion vector applies to its `referenced_data_file` with a lower or equal sequence number;
 *   when a data file has a DV, position-delete files are not consulted (Java: the DV already merges
 *   them), and two DVs for one file are an error.
 */
import { FloeError } from '../../util/errors.js';
import type { DataFile, ManifestEntry } from '../spec/data-file.js';
import { isUnpartitioned, partitionType, type PartitionSpec } from '../spec/partition.js';
import type { Schema } from '../spec/schema.js';
import type { IcebergType } from '../spec/types.js';
import { tupleKey } from './value-keys.js';

export interface DeleteFileRef {
  file: DataFile;
  /** The delete file's data sequence number. */
  sequenceNumber: bigint;
}

export interface DataFileDeletes {
  equality: DeleteFileRef[];
  position: DeleteFileRef[];
  dv: DeleteFileRef | undefined;
}

function seqOf(e: ManifestEntry): bigint {
  if (e.sequenceNumber === undefined) {
    throw new FloeError('iceberg.scan', 'invalid-data', `manifest entry for ${e.dataFile.filePath} has no data sequence number after inheritance`);
  }
  return e.sequenceNumber;
}

export class DeleteIndex {
  private readonly globalEq: DeleteFileRef[] = [];
  private readonly eqByPartition = new Map<string, DeleteFileRef[]>();
  private readonly posByPartition = new Map<string, DeleteFileRef[]>();
  private readonly posByPath = new Map<string, DeleteFileRef[]>();
  private readonly dvs = new Map<string, DeleteFileRef>();
  private readonly partitionTypes = new Map<number, IcebergType[]>();

  constructor(
    private readonly specs: readonly PartitionSpec[],
    private readonly schema: Schema,
    private readonly schemas: readonly Schema[],
  ) {}

  get isEmpty(): boolean {
    return this.globalEq.length === 0 && this.eqByPartition.size === 0 && this.posByPartition.size === 0 && this.posByPath.size === 0 && this.dvs.size === 0;
  }

  private spec(specId: number): PartitionSpec {
    const spec = this.specs.find((s) => s.specId === specId);
    if (!spec) throw new FloeError('iceberg.scan', 'invalid-data', `a manifest uses partition spec ${specId}, which the table metadata does not have`);
    return spec;
  }

  /** Partition tuple key including the spec id; partition field types from the spec. */
  partitionKey(file: DataFile): string {
    let types = this.partitionTypes.get(file.specId);
    if (!types) {
      const spec = this.spec(file.specId);
      // The source column may have been dropped from the current schema: look in every schema.
      const schema = [this.schema, ...[...this.schemas].reverse()].find((s) => spec.fields.every((f) => s.findField(f.sourceId) !== undefined));
      types = schema ? partitionType(spec, schema).fields.map((f) => f.type) : spec.fields.map(() => ({ kind: 'string' }) as IcebergType);
      this.partitionTypes.set(file.specId, types);
    }
    return `${file.specId}/${tupleKey(types, file.partition)}`;
  }

  add(entry: ManifestEntry): void {
    const ref: DeleteFileRef = { file: entry.dataFile, sequenceNumber: seqOf(entry) };
    const f = entry.dataFile;
    if (f.content === 'equality-deletes') {
      if (isUnpartitioned(this.spec(f.specId))) this.globalEq.push(ref);
      else push(this.eqByPartition, this.partitionKey(f), ref);
    } else if (f.content === 'position-deletes') {
      if (f.fileFormat === 'PUFFIN') {
        const target = f.referencedDataFile;
        if (target === undefined) throw new FloeError('iceberg.scan', 'invalid-data', `deletion vector in ${f.filePath} has no referenced_data_file`);
        const existing = this.dvs.get(target);
        if (existing) {
          throw new FloeError('iceberg.scan', 'invalid-data', `two deletion vectors for ${target} (in ${existing.file.filePath} and ${f.filePath}); a snapshot may hold at most one DV per data file`);
        }
        this.dvs.set(target, ref);
      } else if (f.referencedDataFile !== undefined) {
        push(this.posByPath, f.referencedDataFile, ref);
      } else {
        push(this.posByPartition, this.partitionKey(f), ref);
      }
    }
  }

  /** The deletes that apply to a data file with the given data sequence number. */
  forDataFile(file: DataFile, sequenceNumber: bigint): DataFileDeletes {
    if (this.isEmpty) return { equality: [], position: [], dv: undefined };
    const partition = this.partitionKey(file);
    const equality = [...this.globalEq, ...(this.eqByPartition.get(partition) ?? [])].filter((d) => d.sequenceNumber > sequenceNumber);
    const dvRef = this.dvs.get(file.filePath);
    const dv = dvRef && dvRef.sequenceNumber >= sequenceNumber ? dvRef : undefined;
    const position = dv
      ? []
      : [...(this.posByPartition.get(partition) ?? []), ...(this.posByPath.get(file.filePath) ?? [])].filter((d) => d.sequenceNumber >= sequenceNumber);
    return { equality, position, dv };
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
