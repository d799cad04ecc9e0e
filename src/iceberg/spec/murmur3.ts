/**
 * 32-bit Murmur3, x86 variant, seed 0: the hash behind Iceberg's bucket transform (format/spec.md
 * "Bucket Transform Details", Appendix B). Results are signed 32-bit integers, as Java's
 * `Hashing.murmur3_32_fixed().hashBytes(...).asInt()`.
 */

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

function mixK1(k: number): number {
  k = Math.imul(k, C1);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, C2);
}

function mixH1(h: number, k: number): number {
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function fmix(h: number, length: number): number {
  h ^= length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

/** Murmur3 x86 32-bit hash of bytes, as a signed 32-bit integer. */
export function murmur3Hash32(bytes: Uint8Array, seed = 0): number {
  let h = seed | 0;
  const len = bytes.length;
  const blocks = len & ~3;
  for (let i = 0; i < blocks; i += 4) {
    const k = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    h = mixH1(h, mixK1(k));
  }
  const tail = len & 3;
  if (tail > 0) {
    let k = 0;
    if (tail === 3) k ^= bytes[blocks + 2]! << 16;
    if (tail >= 2) k ^= bytes[blocks + 1]! << 8;
    k ^= bytes[blocks]!;
    h ^= mixK1(k);
  }
  return fmix(h, len);
}

const longBuffer = new DataView(new ArrayBuffer(8));
const longBytes = new Uint8Array(longBuffer.buffer);

/** Hash of a long's 8 little-endian bytes (Appendix B `hashLong`; ints are hashed as longs). */
export function murmur3HashLong(value: bigint): number {
  longBuffer.setBigInt64(0, BigInt.asIntN(64, value), true);
  return murmur3Hash32(longBytes);
}
