/**
 * Gzip-compressed metadata files. Iceberg Java writes `v<N>.gz.metadata.json` / `*.gz.metadata.json`
 * when `write.metadata.compression-codec=gzip` (spec: "gzip-compressed metadata files"); readers
 * recognise them by the gzip magic bytes rather than trusting the name.
 */
import { gunzipSync } from 'node:zlib';
import { FloeError } from '../util/errors.js';

function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** The bytes, decompressed when they are a gzip stream. */
export function gunzipIfCompressed(bytes: Uint8Array, location: string): Uint8Array {
  if (!isGzip(bytes)) return bytes;
  try {
    return new Uint8Array(gunzipSync(bytes));
  } catch (e) {
    throw new FloeError('io', 'invalid-data', `${location} starts like a gzip stream but does not decompress: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}
