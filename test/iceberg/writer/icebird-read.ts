/**
 * Reading a floe table with icebird 0.3.1 — an independent Iceberg reader (its own manifest/Avro
 * decoding, hyparquet for Parquet, its own delete application). icebird fetches everything with
 * `fetch`, which in Node does not serve `file:` URLs, so while it runs `fetch` is wrapped to serve
 * local files (with HTTP Range semantics, as hyparquet asks for byte ranges); other URLs pass through.
 *
 * Limits of icebird 0.3.1 (checklist note): equality deletes match on every column of the delete file
 * with `===`, no deletion vectors, top-level columns only — so use it on v2 tables with int/long/
 * string keys.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { icebergRead } from 'icebird';

let depth = 0;
let realFetch: typeof fetch | undefined;

function localFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  if (!url.startsWith('file:')) return realFetch!(input, init);
  const file = fileURLToPath(url);
  if (!fs.existsSync(file)) return Promise.resolve(new Response('not found', { status: 404, statusText: 'Not Found' }));
  const bytes = fs.readFileSync(file);
  const range = new Headers(init?.headers).get('Range');
  if (init?.method === 'HEAD') return Promise.resolve(new Response(null, { status: 200, headers: { 'Content-Length': String(bytes.length) } }));
  if (range) {
    const m = /^bytes=(\d+)-(\d*)$/.exec(range);
    if (!m) return Promise.resolve(new Response('bad range', { status: 416 }));
    const start = Number(m[1]);
    const end = m[2] === '' ? bytes.length : Math.min(bytes.length, Number(m[2]) + 1);
    return Promise.resolve(new Response(bytes.subarray(start, end), { status: 206 }));
  }
  return Promise.resolve(new Response(bytes, { status: 200 }));
}

/** Every live row of the table's current snapshot as icebird returns them (column name → value). */
export async function icebirdRows(tableLocation: string): Promise<Record<string, unknown>[]> {
  if (depth++ === 0) {
    realFetch = globalThis.fetch;
    globalThis.fetch = localFetch as typeof fetch;
  }
  try {
    return (await icebergRead({ tableUrl: tableLocation.replace(/\/+$/, '') })) as Record<string, unknown>[];
  } finally {
    if (--depth === 0) globalThis.fetch = realFetch!;
  }
}
