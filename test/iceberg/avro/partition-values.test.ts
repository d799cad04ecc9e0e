/** Partition tuples of every primitive type: Appendix A Avro types (checked with avsc) and exact round trips. */
import { describe, expect, it } from 'vitest';
import type { DataFile } from '../../../src/iceberg/spec/data-file.js';
import { readManifest, writeManifest } from '../../../src/iceberg/manifest/manifest.js';
import type { PartitionSpec } from '../../../src/iceberg/spec/partition.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import type { Value } from '../../../src/model/values.js';
import { decodeWithAvsc, plain } from './avsc-decode.js';
import { decimalRequiredBytes } from '../../../src/iceberg/avro/iceberg-schema.js';
import { fieldOf, twosComplement, unwrap } from './manifest-fixtures.js';

describe('partition values of every primitive type', () => {
  const types = {
    b: Types.boolean,
    i: Types.int,
    l: Types.long,
    f: Types.float,
    d: Types.double,
    dec: Types.decimal(38, 10),
    dt: Types.date,
    t: Types.time,
    ts: Types.timestamp,
    tstz: Types.timestamptz,
    tsns: Types.timestampNs,
    tstzns: Types.timestamptzNs,
    s: Types.string,
    u: Types.uuid,
    fx: Types.fixed(3),
    bin: Types.binary,
    'odd-name': Types.int,
  };
  const names = Object.keys(types);
  const pSchema = new Schema(
    0,
    names.map((n, i) => ({ id: i + 1, name: n, required: false, type: types[n as keyof typeof types] })),
  );
  const pSpec: PartitionSpec = { specId: 3, fields: names.map((n, i) => ({ sourceId: i + 1, fieldId: 1000 + i, name: n, transform: { kind: 'identity' } })) };
  const values: Value[] = [
    true, -2147483648, -(2n ** 63n), 1.5, -0.25, '-1234567890123456789012345678.0123456789', 19782, 86_399_999_999n,
    -1n, 1_709_164_800_000_000n, 1_709_164_800_000_000_123n, 2n ** 62n, 'héllo', 'f79c3e09-677c-4bbd-a479-3f349cb785e7',
    Uint8Array.of(1, 2, 255), Uint8Array.of(), 7,
  ];

  it('stores each with its Appendix A Avro type and reads it back unchanged', async () => {
    const file: DataFile = { content: 'data', filePath: 'x.parquet', fileFormat: 'PARQUET', specId: 3, partition: values, recordCount: 1n, fileSizeInBytes: 9n };
    const { bytes, manifest } = writeManifest({ formatVersion: 3, schema: pSchema, spec: pSpec, content: 'data', snapshotId: 1n, path: 'm', entries: [{ status: 'added', dataFile: file }] });
    const f = await decodeWithAvsc(bytes);
    const partition = fieldOf(fieldOf(f.schema, 'data_file').type, 'partition').type;
    expect(partition.fields.map((x: any) => [x.name, unwrap(x.type)])).toEqual([
      ['b', 'boolean'],
      ['i', 'int'],
      ['l', 'long'],
      ['f', 'float'],
      ['d', 'double'],
      ['dec', { type: 'fixed', name: 'decimal_38_10', size: 16, logicalType: 'decimal', precision: 38, scale: 10 }],
      ['dt', { type: 'int', logicalType: 'date' }],
      ['t', { type: 'long', logicalType: 'time-micros' }],
      ['ts', { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': false }],
      ['tstz', { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': true }],
      ['tsns', { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': false }],
      ['tstzns', { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': true }],
      ['s', 'string'],
      ['u', { type: 'fixed', name: 'uuid_fixed', size: 16, logicalType: 'uuid' }],
      ['fx', { type: 'fixed', name: 'fixed_3', size: 3 }],
      ['bin', 'bytes'],
      ['odd_x2Dname', 'int'],
    ]);
    expect(fieldOf(partition, 'odd_x2Dname')['iceberg-field-name']).toBe('odd-name');
    const p = plain(f.records[0]).data_file.partition;
    expect(p.dec).toEqual(twosComplement(-12345678901234567890123456780123456789n, 16));
    expect(p.u).toEqual(Uint8Array.from(Buffer.from('f79c3e09677c4bbda4793f349cb785e7', 'hex')));
    expect([p.l, p.t, p.tsns, p.tstzns]).toEqual([-(2n ** 63n), 86_399_999_999n, 1_709_164_800_000_000_123n, 2n ** 62n]);
    expect(readManifest(bytes, { ...manifest, sequenceNumber: 1n }).entries[0].dataFile.partition).toEqual(values);
    expect(manifest.partitions?.every((s) => s.containsNull || s.lowerBound !== undefined)).toBe(true);
  });
});

describe('decimal fixed sizes', () => {
  it('match Java TypeUtil.decimalRequiredBytes for every precision 1..38', () => {
    // Java: the first length whose floor(log10(2^(8·len−1) − 1)) holds the precision.
    const maxPrecisionByLength = [0, 2, 4, 6, 9, 11, 14, 16, 18, 21, 23, 26, 28, 31, 33, 35, 38];
    for (let p = 1; p <= 38; p++) {
      expect(decimalRequiredBytes(p), `precision ${p}`).toBe(maxPrecisionByLength.findIndex((max, len) => len > 0 && p <= max));
    }
  });
});
