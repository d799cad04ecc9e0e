/**
 * Reading a floe-written local table with `icebird@0.3.1` (hyparam's Iceberg reader on hyparquet), the
 * independent cross-check the checklist names. icebird fetches everything with `fetch`, which has no
 * `file:` support in Node, so `file:` URLs are served from disk for the duration of a read (a transport
 * adapter, not a fake: the bytes are the table's). Its limits (checklist note): no partition scoping of
 * equality deletes, no DVs, lossy decimals/timestamps — so callers compare on simple columns of v2
 * tables only.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { icebergRead } from 'icebird';

async function withFileFetch<T>(fn: () => Promise<T>): Promise<T> {
  const original = globalThis.fetch;
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith('file:')) return original(input, init);
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(fileURLToPath(url));
    } catch {
      return new Response(null, { status: 404, statusText: 'Not Found' });
    }
    // Whole object with 200: hyparquet then slices it itself.
    return new Response(bytes, { status: 200, headers: { 'content-length': String(bytes.length) } });
  }) as typeof fetch;
  try {
    return await fn();
  } finally {
    globalThis.fetch = original;
  }
}

/** icebird's rows of the table's current snapshot (objects keyed by column name). */
export function readWithIcebird(tableLocation: string): Promise<Record<string, unknown>[]> {
  return withFileFetch(() => icebergRead({ tableUrl: tableLocation }) as Promise<Record<string, unknown>[]>);
}
