/**
 * CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), the checksum `java.util.zip.CRC32` computes
 * and the Puffin `deletion-vector-v1` blob stores (puffin-spec.md). Table-driven; kept here rather
 * than using `zlib.crc32`, which only Node ≥ 20.15 has.
 */
const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 of `bytes`, as an unsigned 32-bit number. */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
