/**
 * Readers of the plain config formats the repository ships for other programs: docker compose's
 * `.env`, Java `.properties` (Trino catalogs) and `spark-defaults.conf` (whitespace-separated).
 */

/** The `[key, value]` pairs `entry` makes of the lines that are neither blank nor `#` comments (trimmed). */
function parseEntries(text: string, entry: (line: string) => readonly [string, string] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) continue;
    const e = entry(t);
    if (e) out[e[0]] = e[1];
  }
  return out;
}

/** `NAME=value` lines; comments and blank lines skipped. */
export function parseDotenv(text: string): Record<string, string> {
  return parseEntries(text, (t) => {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(t);
    return m ? [m[1]!, m[2]!] : undefined;
  });
}

/** `key=value` lines (Trino catalog files); comments and blank lines skipped. */
export function parseProperties(text: string): Record<string, string> {
  return parseEntries(text, (t) => {
    const eq = t.indexOf('=');
    return [t.slice(0, eq).trim(), t.slice(eq + 1).trim()];
  });
}

/** `key value` lines (spark-defaults.conf); comments and blank lines skipped. */
export function parseSparkConf(text: string): Record<string, string> {
  return parseEntries(text, (t) => {
    const m = /^(\S+)\s+(.*)$/.exec(t)!;
    return [m[1]!, m[2]!.trim()];
  });
}
