/**
 * A second table reader for cross-checks, sharing no reading code with floe: metadata JSON parsed
 * losslessly, manifest lists and manifests decoded with `avsc`, data and delete files read with
 * `hyparquet`, deletion vectors parsed by the small portable-Roaring reader below, and the spec's
 * delete rules ("Scan Planning") applied here from scratch. Reads the current snapshot of a local
 * table into value-model rows of the current schema (top-level fields; no schema evolution).
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseJson, stringifyJson } from '../../../src/util/json.js';
import type { Value } from '../../../src/model/values.js';
import { schemaFromJson } from '../../../src/iceberg/spec/schema-json.js';
import type { NestedField } from '../../../src/iceberg/spec/types.js';
import { decodeWithAvsc, plain } from '../avro/avsc-decode.js';
import { footerOf, readWithHyparquet } from '../parquet/hyparquet-raw.js';

function localPath(uri: string): string {
  return uri.startsWith('file:') ? fileURLToPath(uri) : uri;
}

function read(uri: string): Uint8Array {
  return new Uint8Array(fs.readFileSync(localPath(uri)));
}

/** Physical column names of top-level fields, by field id, from the Parquet footer. */
function namesById(bytes: Uint8Array): Map<number, string> {
  const md = footerOf(bytes);
  const out = new Map<number, string>();
  // schema[0] is the root; its direct children follow depth-first, so walk with child counts.
  let i = 1;
  const skip = (): void => {
    const e = md.schema[i++];
    for (let c = 0; c < (e.num_children ?? 0); c++) skip();
  };
  for (let c = 0; c < (md.schema[0].num_children ?? 0); c++) {
    const e = md.schema[i];
    if (e.field_id !== undefined) out.set(e.field_id, e.name);
    skip();
  }
  return out;
}

async function readParquet(uri: string, fields: readonly NestedField[]): Promise<Value[][]> {
  const bytes = read(uri);
  const names = namesById(bytes);
  return readWithHyparquet(bytes, fields, fields.map((f) => names.get(f.id) ?? `__missing_${f.id}`));
}

// ---- deletion vectors: spec "Deletion Vectors" + the portable Roaring format ----------------------

function readRoaring(view: DataView, start: number, key: number, out: Set<number>): number {
  let p = start;
  const cookie = view.getUint32(p, true);
  let n: number;
  let runs: Uint8Array | undefined;
  if ((cookie & 0xffff) === 12347) {
    n = (cookie >>> 16) + 1;
    p += 4;
    runs = new Uint8Array(view.buffer, view.byteOffset + p, Math.ceil(n / 8));
    p += Math.ceil(n / 8);
  } else if (cookie === 12346) {
    n = view.getUint32(p + 4, true);
    p += 8;
  } else {
    throw new Error(`bad roaring cookie ${cookie}`);
  }
  const keys: number[] = [];
  const cards: number[] = [];
  for (let c = 0; c < n; c++) {
    keys.push(view.getUint16(p, true));
    cards.push(view.getUint16(p + 2, true) + 1);
    p += 4;
  }
  if (!runs || n >= 4) p += 4 * n; // offset header
  const high = key * 2 ** 32;
  for (let c = 0; c < n; c++) {
    const base = high + keys[c] * 65536;
    if (runs && (runs[c >> 3] >> (c & 7)) & 1) {
      const count = view.getUint16(p, true);
      p += 2;
      for (let r = 0; r < count; r++) {
        const s = view.getUint16(p, true);
        const len = view.getUint16(p + 2, true);
        p += 4;
        for (let v = s; v <= s + len; v++) out.add(base + v);
      }
    } else if (cards[c] <= 4096) {
      for (let k = 0; k < cards[c]; k++) out.add(base + view.getUint16(p + 2 * k, true));
      p += 2 * cards[c];
    } else {
      for (let w = 0; w < 8192; w++) {
        const byte = view.getUint8(p + w);
        for (let b = 0; b < 8; b++) if ((byte >> b) & 1) out.add(base + w * 8 + b);
      }
      p += 8192;
    }
  }
  return p;
}

function readDV(uri: string, offset: number, length: number): Set<number> {
  const blob = read(uri).subarray(offset, offset + length);
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const magic = [...blob.subarray(4, 8)].map((b) => b.toString(16)).join('');
  if (magic !== 'd1d33964') throw new Error(`bad DV magic ${magic}`);
  let p = 8;
  const count = Number(view.getBigUint64(p, true));
  p += 8;
  const out = new Set<number>();
  for (let i = 0; i < count; i++) {
    const key = view.getUint32(p, true);
    p = readRoaring(view, p + 4, key, out);
  }
  return out;
}

// ---- the table ----------------------------------------------------------------------------------

interface Entry {
  status: number;
  seq: bigint;
  specId: number;
  file: Record<string, any>;
}

function partitionText(specId: number, partition: Record<string, unknown>): string {
  return `${specId}:${stringifyJson(partition, undefined)}`;
}

export async function readIndependently(metadataLocation: string): Promise<Value[][]> {
  const m = parseJson(new TextDecoder().decode(read(metadataLocation)));
  const schema = schemaFromJson(m.schemas.find((s: any) => s['schema-id'] === m['current-schema-id']));
  const current = m['current-snapshot-id'];
  if (current === undefined || current === null || current === -1) return [];
  const snapshot = m.snapshots.find((s: any) => BigInt(s['snapshot-id']) === BigInt(current));
  const unpartitioned = new Set<number>(m['partition-specs'].filter((s: any) => s.fields.length === 0).map((s: any) => s['spec-id']));

  const list = await decodeWithAvsc(read(snapshot['manifest-list']));
  const entries: Entry[] = [];
  for (const mf of list.records.map(plain)) {
    const manifest = await decodeWithAvsc(read(mf.manifest_path));
    for (const e of manifest.records.map(plain)) {
      if (e.status === 2) continue;
      const seq = e.sequence_number ?? (e.status === 1 ? mf.sequence_number : undefined);
      if (seq === undefined || seq === null) throw new Error(`entry without sequence number in ${mf.manifest_path}`);
      entries.push({ status: e.status, seq: BigInt(seq), specId: mf.partition_spec_id, file: e.data_file });
    }
  }
  const data = entries.filter((e) => e.file.content === 0);
  const eqDeletes = entries.filter((e) => e.file.content === 2);
  const posFiles = entries.filter((e) => e.file.content === 1 && e.file.file_format.toUpperCase() === 'PARQUET');
  const dvs = entries.filter((e) => e.file.content === 1 && e.file.file_format.toUpperCase() === 'PUFFIN');

  const eqSets = new Map<Entry, { ids: number[]; keys: Set<string> }>();
  for (const d of eqDeletes) {
    const ids: number[] = d.file.equality_ids;
    const fields = ids.map((id) => schema.field(id));
    const rows = await readParquet(d.file.file_path, fields);
    eqSets.set(d, { ids, keys: new Set(rows.map((r) => stringifyJson(r.map(keyPart)))) });
  }
  const positions: { entry: Entry; byPath: Map<string, Set<number>> }[] = [];
  for (const d of posFiles) {
    const rows = await readParquet(d.file.file_path, [
      { id: 2147483546, name: 'file_path', required: true, type: { kind: 'string' } },
      { id: 2147483545, name: 'pos', required: true, type: { kind: 'long' } },
    ]);
    const byPath = new Map<string, Set<number>>();
    for (const [p, pos] of rows) {
      if (!byPath.has(p as string)) byPath.set(p as string, new Set());
      byPath.get(p as string)!.add(Number(pos));
    }
    positions.push({ entry: d, byPath });
  }

  const out: Value[][] = [];
  for (const d of data) {
    const part = partitionText(d.specId, d.file.partition);
    const deleted = new Set<number>();
    const dv = dvs.find((x) => x.file.referenced_data_file === d.file.file_path && x.seq >= d.seq);
    if (dv) {
      for (const p of readDV(dv.file.file_path, Number(dv.file.content_offset), Number(dv.file.content_size_in_bytes))) deleted.add(p);
    } else {
      for (const { entry, byPath } of positions) {
        if (entry.seq < d.seq) continue;
        const ref = entry.file.referenced_data_file;
        if (ref ? ref !== d.file.file_path : partitionText(entry.specId, entry.file.partition) !== part) continue;
        for (const p of byPath.get(d.file.file_path) ?? []) deleted.add(p);
      }
    }
    const applicable = eqDeletes.filter((e) => e.seq > d.seq && (unpartitioned.has(e.specId) || partitionText(e.specId, e.file.partition) === part));
    const rows = await readParquet(d.file.file_path, schema.fields);
    rows.forEach((row, pos) => {
      if (deleted.has(pos)) return;
      for (const e of applicable) {
        const { ids, keys } = eqSets.get(e)!;
        const key = stringifyJson(ids.map((id) => keyPart(row[schema.fields.findIndex((f) => f.id === id)])));
        if (keys.has(key)) return;
      }
      out.push(row);
    });
  }
  return out;
}

function keyPart(v: Value): unknown {
  if (v instanceof Uint8Array) return `bytes:${[...v].join(',')}`;
  if (typeof v === 'bigint') return `n:${v}`;
  if (typeof v === 'number') return `n:${v}`;
  return v;
}
