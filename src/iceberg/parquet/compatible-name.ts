/**
 * Physical Parquet column names. Java writes every Iceberg field under
 * `AvroSchemaUtil.makeCompatibleName(name)`: a name that is not a valid Avro name is rewritten, one
 * UTF-16 unit at a time, with `_<digit>` for a leading digit and `_x<HEX>` for any other illegal
 * character, while the `iceberg.schema` key-value entry keeps the original name (docs/iceberg-writer-checklist.md §5).
 *
 * Deviation from Java, on purpose: only ASCII letters count as letters here. Java also keeps Unicode
 * letters, but icebird (and any reader that resolves `iceberg.schema` names through the same
 * sanitizer) treats only `[A-Za-z0-9_]` as legal and would then look up the wrong physical name.
 * Readers that resolve columns by field id (Spark, Trino, DuckDB, PyIceberg, floe) do not care.
 */

function isAsciiLetter(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

function isAsciiDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

const UNDERSCORE = 0x5f;

/** The physical column name Java would write for `name` (ASCII rules; see the module header). */
export function makeCompatibleName(name: string): string {
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    const legal = isAsciiLetter(code) || code === UNDERSCORE || (i > 0 && isAsciiDigit(code));
    if (legal) out += name[i];
    else if (isAsciiDigit(code)) out += '_' + name[i];
    else out += '_x' + code.toString(16).toUpperCase();
  }
  return out;
}
