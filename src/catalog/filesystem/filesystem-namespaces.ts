/**
 * Namespaces of the filesystem catalog. A namespace is a directory under the warehouse holding the
 * marker `.namespace.json` (`{"namespace": [...], "properties": {...}}`, see filesystem-layout.ts).
 * A directory without the marker still counts as a namespace when a table lives directly in it, so
 * that warehouses created by Spark's HadoopCatalog (plain directories) can be read.
 *
 * Property updates rewrite the marker (read-modify-write, not atomic against a concurrent update of
 * the same namespace's properties: the last writer wins, as in Java's HadoopCatalog, which has no
 * namespace properties at all).
 */
import type { FileIO } from '../../io/file-io.js';
import { baseName, listChildren } from '../../io/listing.js';
import { FloeError, isFloeError } from '../../util/errors.js';
import { parseJson, stringifyJson } from '../../util/json.js';
import { FileSystemLayout, joinLocation, METADATA_DIR } from './filesystem-layout.js';
import { listMetadataVersions } from './filesystem-versions.js';
import { checkNamespace, namespaceToString } from '../identifiers.js';

const SUBSYSTEM = 'catalog.filesystem';
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class FileSystemNamespaces {
  constructor(
    private readonly io: FileIO,
    private readonly layout: FileSystemLayout,
  ) {}

  /** Whether `dir` is a table directory (its metadata directory holds a `v<N>.metadata.json`). */
  async isTableDir(dir: string): Promise<boolean> {
    return (await listMetadataVersions(this.io, joinLocation(dir, METADATA_DIR))).size > 0;
  }

  /** The marker's properties, or undefined when there is no marker. */
  async readMarker(namespace: readonly string[]): Promise<Record<string, string> | undefined> {
    const location = this.layout.namespaceMarker(namespace);
    let bytes: Uint8Array;
    try {
      bytes = await this.io.read(location);
    } catch (e) {
      if (isFloeError(e, 'not-found')) return undefined;
      throw e;
    }
    let doc: unknown;
    try {
      doc = parseJson(decoder.decode(bytes));
    } catch (e) {
      throw new FloeError(SUBSYSTEM, 'invalid-data', `namespace marker ${location} is not JSON: ${e instanceof Error ? e.message : String(e)}; restore it as {"namespace": [...], "properties": {}}`, { cause: e });
    }
    const props = (doc as { properties?: unknown })?.properties ?? {};
    if (typeof props !== 'object' || props === null || Array.isArray(props) || Object.values(props).some((v) => typeof v !== 'string')) {
      throw new FloeError(SUBSYSTEM, 'invalid-data', `namespace marker ${location}: expected "properties" to be an object of strings, found ${stringifyJson(props as never)}`);
    }
    return { ...(props as Record<string, string>) };
  }

  async exists(namespace: readonly string[]): Promise<boolean> {
    checkNamespace(namespace);
    if ((await this.readMarker(namespace)) !== undefined) return true;
    return this.holdsTable(this.layout.namespaceDir(namespace));
  }

  async requireExists(namespace: readonly string[]): Promise<void> {
    if (!(await this.exists(namespace))) {
      throw new FloeError(SUBSYSTEM, 'not-found', `namespace ${namespaceToString(namespace)} does not exist under ${this.layout.warehouse}; create it first`);
    }
  }

  async create(namespace: readonly string[], properties: Record<string, string>): Promise<void> {
    checkNamespace(namespace);
    const dir = this.layout.namespaceDir(namespace);
    if (await this.isTableDir(dir)) {
      throw new FloeError(SUBSYSTEM, 'already-exists', `cannot create namespace ${namespaceToString(namespace)}: a table of that name exists at ${dir}`);
    }
    for (let depth = 1; depth < namespace.length; depth++) {
      if (await this.isTableDir(this.layout.namespaceDir(namespace.slice(0, depth)))) {
        throw new FloeError(SUBSYSTEM, 'invalid-argument', `cannot create namespace ${namespaceToString(namespace)}: ${namespaceToString(namespace.slice(0, depth))} is a table, not a namespace`);
      }
    }
    if (await this.holdsTable(dir)) {
      throw new FloeError(SUBSYSTEM, 'already-exists', `namespace ${namespaceToString(namespace)} already exists (a directory with tables at ${dir})`);
    }
    // The marker's create-if-absent decides between concurrent creators (on stores where it is atomic).
    const created = await this.io.writeIfAbsent(this.layout.namespaceMarker(namespace), this.encode(namespace, properties));
    if (!created) throw new FloeError(SUBSYSTEM, 'already-exists', `namespace ${namespaceToString(namespace)} already exists`);
    // Parents exist implicitly, as directories do after Java HadoopCatalog's mkdirs (and as JDBC's
    // listNamespaces reports prefixes): give missing ones an empty marker.
    for (let depth = namespace.length - 1; depth >= 1; depth--) {
      const parent = namespace.slice(0, depth);
      if (!(await this.io.writeIfAbsent(this.layout.namespaceMarker(parent), this.encode(parent, {})))) break;
    }
  }

  async load(namespace: readonly string[]): Promise<Record<string, string>> {
    checkNamespace(namespace);
    const props = await this.readMarker(namespace);
    if (props === undefined && !(await this.holdsTable(this.layout.namespaceDir(namespace)))) {
      throw new FloeError(SUBSYSTEM, 'not-found', `namespace ${namespaceToString(namespace)} does not exist under ${this.layout.warehouse}`);
    }
    // Java's HadoopCatalog reports the directory as "location".
    return { location: this.layout.namespaceDir(namespace), ...(props ?? {}) };
  }

  async update(namespace: readonly string[], removals: string[], updates: Record<string, string>): Promise<void> {
    checkNamespace(namespace);
    const overlap = removals.filter((k) => k in updates);
    if (overlap.length > 0) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `properties ${overlap.join(', ')} are both updated and removed; name each property once`);
    }
    const current = await this.readMarker(namespace);
    if (current === undefined) await this.requireExists(namespace); // throws unless an implicit namespace
    const next = { ...(current ?? {}) };
    for (const k of removals) delete next[k];
    Object.assign(next, updates);
    await this.io.write(this.layout.namespaceMarker(namespace), this.encode(namespace, next));
  }

  /** Child namespaces of `parent` ([] = top level), sorted. */
  async list(parent: readonly string[]): Promise<string[][]> {
    if (parent.length > 0) await this.requireExists(parent);
    const { directories } = await listChildren(this.io, this.layout.namespaceDir(parent));
    const out: string[][] = [];
    for (const dir of directories) {
      const name = baseName(dir);
      if (name.startsWith('.')) continue;
      const ns = [...parent, name];
      if ((await this.readMarker(ns)) !== undefined || (await this.holdsTable(dir))) out.push(ns);
    }
    return out.sort((a, b) => namespaceToString(a).localeCompare(namespaceToString(b)));
  }

  /** Table names directly in the namespace directory, sorted. */
  async tableNames(namespace: readonly string[]): Promise<string[]> {
    const { directories } = await listChildren(this.io, this.layout.namespaceDir(namespace));
    const names: string[] = [];
    for (const dir of directories) {
      const name = baseName(dir);
      if (!name.startsWith('.') && (await this.isTableDir(dir))) names.push(name);
    }
    return names.sort();
  }

  /**
   * Drops an empty namespace: no tables and no child namespaces. Only the marker is removed; files
   * left by tables dropped without purge stay where they are (they belong to nobody's catalog entry
   * but were promised to be kept).
   */
  async drop(namespace: readonly string[]): Promise<void> {
    checkNamespace(namespace);
    await this.requireExists(namespace);
    const tables = await this.tableNames(namespace);
    const children = await this.list(namespace);
    if (tables.length > 0 || children.length > 0) {
      const what = [
        ...tables.map((t) => `table ${t}`),
        ...children.map((c) => `namespace ${namespaceToString(c)}`),
      ];
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `cannot drop namespace ${namespaceToString(namespace)}: it is not empty (holds ${what.slice(0, 5).join(', ')}${what.length > 5 ? `, … ${what.length} in all` : ''}); drop those first`, { context: { reason: 'not-empty' } });
    }
    await this.io.delete(this.layout.namespaceMarker(namespace));
  }

  private async holdsTable(dir: string): Promise<boolean> {
    const { directories } = await listChildren(this.io, dir);
    for (const child of directories) {
      if (!baseName(child).startsWith('.') && (await this.isTableDir(child))) return true;
    }
    return false;
  }

  private encode(namespace: readonly string[], properties: Record<string, string>): Uint8Array {
    const sorted = Object.fromEntries(Object.entries(properties).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return encoder.encode(stringifyJson({ namespace: [...namespace], properties: sorted }, 2));
  }
}
