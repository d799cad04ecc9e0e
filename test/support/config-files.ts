/**
 * Readers of the plain config formats the repository ships for other programs: docker compose's
 * `.env`, Java `.properties` (Trino catalogs) and `spark-defaults.conf` (whitespace-separated).
 */

/** `NAME=value` lines; comments and blank lines skipped. */
export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

/** `key=value` lines (Trino catalog files); comments and blank lines skipped. */
export function parseProperties(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) continue;
    const eq = t.indexOf('=');
    out[t.slice(0, eq).trim()] = t.slice(eq + 1).trim();
  }
  return out;
}

/** `key value` lines (spark-defaults.conf); comments and blank lines skipped. */
export function parseSparkConf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) continue;
    const m = /^(\S+)\s+(.*)$/.exec(t)!;
    out[m[1]!] = m[2]!.trim();
  }
  return out;
}
