/**
 * Namespace and table identifiers: validation and the text forms catalogs use.
 *
 * A namespace is a list of levels (`['sales', 'eu']`); its dotted form (`sales.eu`) is what the JDBC
 * catalog stores in `table_namespace` (Java `JdbcUtil.namespaceToString`) and what users type. The
 * filesystem catalog turns levels into directories, so names that cannot be directory names safely on
 * every store are refused here, for every catalog alike.
 */
import { FloeError } from '../util/errors.js';
import type { TableIdentifier } from '../iceberg/metadata/catalog.js';

const SUBSYSTEM = 'catalog';
const MAX_PART_BYTES = 255;

/**
 * Refuses names that would break a path-based layout or another engine reading it: empty, `.`/`..`
 * or a leading `.` (floe keeps its markers and temporary files in dot-files), `/` or `\`, `:` (Hadoop's
 * Path reads it as a scheme separator), and control characters.
 */
function checkIdentifierPart(part: string, what: string): void {
  let why: string | undefined;
  if (typeof part !== 'string' || part.length === 0) why = 'is empty';
  else if (part.startsWith('.')) why = 'starts with "."';
  else if (/[/\\:]/.test(part)) why = 'contains "/", "\\" or ":"';
  // eslint-disable-next-line no-control-regex
  else if (/[\u0000-\u001f\u007f]/.test(part)) why = 'contains a control character';
  // a directory name (NAME_MAX is 255 bytes on Linux, macOS and S3 key segments are not longer in
  // practice), and the JDBC catalog's VARCHAR(255) columns; longer ones failed as storage errors
  else if (Buffer.byteLength(part, 'utf8') > MAX_PART_BYTES) why = `is ${Buffer.byteLength(part, 'utf8')} bytes long (at most ${MAX_PART_BYTES})`;
  if (why !== undefined) {
    const shown = part.length > 64 ? `${part.slice(0, 64)}…` : part;
    throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what} ${JSON.stringify(shown)} ${why}; names must be non-empty, at most ${MAX_PART_BYTES} bytes, must not start with "." and must not contain "/", "\\", ":" or control characters`);
  }
}

export function checkNamespace(namespace: readonly string[]): void {
  if (!Array.isArray(namespace) || namespace.length === 0) {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', `expected a namespace with at least one level, found ${JSON.stringify(namespace)}`);
  }
  for (const level of namespace) checkIdentifierPart(level, 'namespace level');
}

export function checkTableIdentifier(id: TableIdentifier): void {
  checkNamespace(id.namespace);
  checkIdentifierPart(id.name, 'table name');
}

/** `['a', 'b']` → `a.b` (Java `Namespace.toString` / `JdbcUtil.namespaceToString`). */
export function namespaceToString(namespace: readonly string[]): string {
  return namespace.join('.');
}

function sameNamespace(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((level, i) => level === b[i]);
}

export function sameTable(a: TableIdentifier, b: TableIdentifier): boolean {
  return a.name === b.name && sameNamespace(a.namespace, b.namespace);
}
