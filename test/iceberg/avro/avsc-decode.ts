/**
 * Decodes Avro container files with the independent `avsc` library (not floe's codec), with longs as
 * BigInt, so tests can check what floe writes against a second implementation of the Avro spec.
 */
import avro from 'avsc';

/** avsc's documented way to read 64-bit longs exactly: a LongType whose values are BigInts. */
const bigintLong = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(),
  toBuffer: (n: bigint) => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(n);
    return buf;
  },
  fromJSON: BigInt,
  toJSON: Number,
  isValid: (n: unknown) => typeof n === 'bigint',
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
});

/**
 * avsc applies a registry override only to the bare name `long`, not to `{"type":"long", logicalType…}`,
 * so annotated longs are reduced to `"long"` for decoding (avsc does not interpret those logical
 * types anyway; tests check the annotations on the header's schema JSON).
 */
function bareLongs(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(bareLongs);
  if (s === null || typeof s !== 'object') return s;
  const o = s as Record<string, unknown>;
  if (o.type === 'long') return 'long';
  const out: Record<string, unknown> = { ...o };
  if (o.type === 'record') out.fields = (o.fields as Record<string, unknown>[]).map((f) => ({ ...f, type: bareLongs(f.type) }));
  if (o.type === 'array') out.items = bareLongs(o.items);
  if (o.type === 'map') out.values = bareLongs(o.values);
  if (typeof o.type === 'object') out.type = bareLongs(o.type);
  return out;
}

export function avscType(schema: unknown): avro.Type {
  return avro.Type.forSchema(bareLongs(schema) as avro.Schema, { registry: { long: bigintLong } as never });
}

export interface AvscFile {
  /** The writer schema exactly as stored in the header (parsed JSON). */
  schema: any;
  codec: string;
  meta: Record<string, string>;
  records: any[];
}

export function decodeWithAvsc(bytes: Uint8Array): Promise<AvscFile> {
  return new Promise((resolve, reject) => {
    const decoder = new avro.streams.BlockDecoder({ parseHook: (schema: unknown) => avscType(schema) as never });
    const out: AvscFile = { schema: undefined, codec: '', meta: {}, records: [] };
    decoder.on('metadata', (_type: unknown, codec: string, header: { meta: Record<string, Buffer> }) => {
      out.codec = codec;
      for (const [k, v] of Object.entries(header.meta)) out.meta[k] = v.toString('utf8');
      out.schema = JSON.parse(out.meta['avro.schema']);
    });
    decoder.on('data', (r: unknown) => out.records.push(r));
    decoder.on('error', reject);
    decoder.on('end', () => resolve(out));
    decoder.end(Buffer.from(bytes));
  });
}

/** Plain JSON-like copy of an avsc record (Buffers → Uint8Array, records → plain objects). */
export function plain(v: any): any {
  if (v === null || v === undefined) return null;
  if (Buffer.isBuffer(v)) return new Uint8Array(v);
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const k of Object.keys(v)) o[k] = plain(v[k]);
    return o;
  }
  return v;
}
