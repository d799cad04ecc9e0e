/**
 * MariaDB's UUID, INET4 and INET6 (10.7+, 10.10+, 10.5+), which the binlog carries as their raw bytes
 * (under binlog_row_metadata=FULL), formatted as the server prints them, so that the binlog value
 * equals the snapshot's text. Both of floe's binlog decoders use them: its own row decoder
 * (column-readers.ts) and the conversion of zongji's images (zongji/binlog-values.ts).
 */

function fixedWidth(bytes: Uint8Array, width: number): Uint8Array {
  // The binlog strips trailing zero bytes of fixed-width binary values; restore the width.
  if (bytes.length >= width) return bytes;
  const out = new Uint8Array(width);
  out.set(bytes);
  return out;
}

export function formatUuid(raw: Uint8Array): string {
  const hex = Buffer.from(fixedWidth(raw, 16)).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function formatInet4(raw: Uint8Array): string {
  const b = fixedWidth(raw, 4);
  return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
}

/** RFC 5952 text, with IPv4-mapped and IPv4-compatible forms dotted, as MariaDB prints INET6. */
export function formatInet6(raw: Uint8Array): string {
  const b = fixedWidth(raw, 16);
  if (b.subarray(0, 10).every((x) => x === 0)) {
    const v4 = formatInet4(b.subarray(12));
    if (b[10] === 0xff && b[11] === 0xff) return `::ffff:${v4}`;
    const low32 = ((b[12]! << 24) >>> 0) + (b[13]! << 16) + (b[14]! << 8) + b[15]!;
    if (b[10] === 0 && b[11] === 0 && low32 > 1) return `::${v4}`;
  }
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((b[i]! << 8) | b[i + 1]!);
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (g: number): string => g.toString(16);
  if (bestStart < 0) return groups.map(hex).join(':');
  return `${groups.slice(0, bestStart).map(hex).join(':')}::${groups.slice(bestStart + bestLength).map(hex).join(':')}`;
}
