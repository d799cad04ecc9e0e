/**
 * MySQL's partial JSON updates (binlog_row_value_options=PARTIAL_JSON, MySQL 8.0.3+): the after image
 * of a PARTIAL_UPDATE_ROWS_EVENT may carry, for a JSON column, the list of changes a
 * JSON_SET / JSON_REPLACE / JSON_REMOVE made instead of the whole document. This module reads that
 * list and applies it to the document of the before image, giving the text MySQL prints for the new
 * document (the canonical text of mysql-json.ts, which a snapshot `SELECT` returns).
 *
 * Wire form (sql/json_diff.cc Json_diff_vector::write_binary / read_json_diff): a 4-byte little-endian
 * length of what follows, then per change: the operation (1 byte: 0 REPLACE, 1 INSERT, 2 REMOVE), the
 * path's length (length-encoded integer) and its text (Json_path::to_string: `$`, `.member` or
 * `."quoted member"`, `[n]`, `[last]`, `[last-n]`), and — except for REMOVE — the value's length
 * (length-encoded) and the value in binary JSON.
 *
 * Semantics (json_diff.cc apply_json_diff): REPLACE puts the value where the path points (it must
 * exist); INSERT adds a member the object lacks, or inserts into an array at the index (past the end:
 * appends); REMOVE deletes the member or array cell, which must exist. Anything else is "rejected" —
 * MySQL's replica then fails the same way; here it stops the table with an error.
 *
 * The documents are kept as a small tree whose scalars are their canonical text, taken from the
 * before image's text and from the values' binary JSON (mysqlJsonBinaryToText), so every untouched
 * value prints exactly as before. Objects print their members sorted as MySQL stores them: by the
 * key's UTF-8 length, then bytewise (json_binary.cc / Json_object's key comparator).
 */
import { FloeError } from '../../../../util/errors.js';
import { mysqlJsonBinaryToText } from './mysql-json.js';

type JsonNode = { readonly kind: 'object'; readonly members: Map<string, JsonNode> } | { readonly kind: 'array'; readonly items: JsonNode[] } | { readonly kind: 'scalar'; readonly text: string };

type Leg = { readonly kind: 'member'; readonly name: string } | { readonly kind: 'cell'; readonly index: number; readonly fromEnd: boolean };

export interface JsonDiff {
  readonly operation: 'replace' | 'insert' | 'remove';
  /** The path as logged. */
  readonly path: string;
  /** The value's canonical text (REPLACE, INSERT). */
  readonly value?: string;
}

const OPERATIONS = ['replace', 'insert', 'remove'] as const;

function corrupt(what: string): FloeError {
  return new FloeError('source.mysql.binlog', 'invalid-data', `partial JSON update is malformed: ${what}; the binlog event is corrupt or floe misreads its layout`);
}

/** Length-encoded integer (MySQL net_field_length) at `pos`: [value, next position]. */
function lengthEncoded(bytes: Uint8Array, pos: number, end: number): [number, number] {
  if (pos >= end) throw corrupt('a length runs past the end of the change list');
  const first = bytes[pos]!;
  if (first < 0xfb) return [first, pos + 1];
  const n = first === 0xfc ? 2 : first === 0xfd ? 3 : first === 0xfe ? 8 : 0;
  if (n === 0 || pos + 1 + n > end) throw corrupt(`length prefix 0x${first.toString(16)}`);
  let v = 0;
  for (let i = n; i >= 1; i--) v = v * 256 + bytes[pos + i]!;
  return [v, pos + 1 + n];
}

/** Reads the changes of one column; `bytes` is the column's value from its 4-byte length on. */
export function readJsonDiffs(bytes: Uint8Array): { diffs: JsonDiff[]; size: number } {
  if (bytes.length < 4) throw corrupt('fewer than 4 bytes for the length of the change list');
  const length = (bytes[0]! | (bytes[1]! << 8) | (bytes[2]! << 16)) + bytes[3]! * 0x1000000;
  const end = 4 + length;
  if (end > bytes.length) throw corrupt(`the change list claims ${length} bytes, ${bytes.length - 4} remain`);
  const diffs: JsonDiff[] = [];
  let pos = 4;
  while (pos < end) {
    const operation = OPERATIONS[bytes[pos]!];
    if (!operation) throw corrupt(`unknown operation ${bytes[pos]}`);
    const [pathLength, pathAt] = lengthEncoded(bytes, pos + 1, end);
    if (pathAt + pathLength > end) throw corrupt('a path runs past the end of the change list');
    const path = Buffer.from(bytes.buffer, bytes.byteOffset + pathAt, pathLength).toString('utf8');
    pos = pathAt + pathLength;
    parsePath(path); // a malformed path is a malformed event: refuse it here
    if (operation === 'remove') {
      diffs.push({ operation, path });
      continue;
    }
    const [valueLength, valueAt] = lengthEncoded(bytes, pos, end);
    if (valueAt + valueLength > end) throw corrupt('a value runs past the end of the change list');
    const value = mysqlJsonBinaryToText(bytes.subarray(valueAt, valueAt + valueLength));
    pos = valueAt + valueLength;
    diffs.push({ operation, path, value });
  }
  return { diffs, size: end };
}

/** A path as Json_path::to_string prints it: `$` then `.name`, `."name"`, `[n]`, `[last]`, `[last-n]`. */
function parsePath(path: string): Leg[] {
  const bad = (why: string): FloeError => corrupt(`path ${JSON.stringify(path)}: ${why}`);
  let i = 0;
  const space = () => {
    while (path[i] === ' ') i++;
  };
  space();
  if (path[i] !== '$') throw bad('expected it to start with $');
  i++;
  const legs: Leg[] = [];
  for (;;) {
    space();
    if (i >= path.length) return legs;
    const c = path[i];
    if (c === '.') {
      i++;
      space();
      if (path[i] === '"') {
        const start = i;
        i++;
        while (i < path.length && path[i] !== '"') i += path[i] === '\\' ? 2 : 1;
        if (i >= path.length) throw bad('unterminated quoted member name');
        i++;
        legs.push({ kind: 'member', name: JSON.parse(path.slice(start, i)) as string });
      } else {
        const start = i;
        while (i < path.length && path[i] !== '.' && path[i] !== '[' && path[i] !== ' ') i++;
        const name = path.slice(start, i);
        if (name === '' || name === '*' || name.startsWith('**')) throw bad('expected a member name (wildcards never appear in a logged change)');
        legs.push({ kind: 'member', name });
      }
    } else if (c === '[') {
      const close = path.indexOf(']', i);
      if (close < 0) throw bad("unterminated '['");
      const body = path.slice(i + 1, close).replace(/\s+/g, '');
      i = close + 1;
      const last = /^last(?:-(\d+))?$/.exec(body);
      if (last) legs.push({ kind: 'cell', index: Number(last[1] ?? 0), fromEnd: true });
      else if (/^\d+$/.test(body)) legs.push({ kind: 'cell', index: Number(body), fromEnd: false });
      else throw bad(`expected an array index, found [${body}]`);
    } else {
      throw bad(`unexpected ${JSON.stringify(c)} at ${i}`);
    }
  }
}

/** The document MySQL prints as `text` (its canonical JSON text), as a tree of canonical scalars. */
function parseCanonicalJson(text: string): JsonNode {
  let i = 0;
  const fail = (why: string): never => {
    throw new FloeError('source.mysql.binlog', 'invalid-data', `the before image's JSON text is not JSON (${why} at ${i}): ${text.slice(0, 80)}`);
  };
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\t' || text[i] === '\r')) i++;
  };
  const string = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail('unterminated string');
    i++;
    return text.slice(start, i);
  };
  const value = (): JsonNode => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const members = new Map<string, JsonNode>();
      ws();
      if (text[i] === '}') {
        i++;
        return { kind: 'object', members };
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a member name');
        const key = JSON.parse(string()) as string;
        ws();
        if (text[i] !== ':') fail("expected ':'");
        i++;
        members.set(key, value());
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return { kind: 'object', members };
        } else fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const items: JsonNode[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return { kind: 'array', items };
      }
      for (;;) {
        items.push(value());
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return { kind: 'array', items };
        } else fail("expected ',' or ']'");
      }
    }
    if (c === '"') return { kind: 'scalar', text: string() };
    const start = i;
    while (i < text.length && !',]} \n\t\r'.includes(text[i]!)) i++;
    if (i === start) fail('expected a value');
    return { kind: 'scalar', text: text.slice(start, i) };
  };
  const root = value();
  ws();
  if (i !== text.length) fail('text after the document');
  return root;
}

/** MySQL's order of object members: by UTF-8 length, then bytewise. */
function compareKeys(a: string, b: string): number {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length - y.length || Buffer.compare(x, y);
}

/** The canonical text of a tree (mysql-json.ts: `{"k": v, …}`, `[a, b]`). */
function canonicalJsonText(node: JsonNode): string {
  switch (node.kind) {
    case 'scalar':
      return node.text;
    case 'array':
      return `[${node.items.map(canonicalJsonText).join(', ')}]`;
    case 'object':
      return `{${[...node.members.keys()]
        .sort(compareKeys)
        .map((k) => `${JSON.stringify(k)}: ${canonicalJsonText(node.members.get(k)!)}`)
        .join(', ')}}`;
  }
}

/** Array position of a cell leg in an array of `size` (Json_path_leg::first_array_index). */
function cellPosition(leg: Leg & { kind: 'cell' }, size: number): { position: number; within: boolean } {
  if (leg.fromEnd) return { position: leg.index < size ? size - 1 - leg.index : 0, within: leg.index < size };
  return { position: Math.min(leg.index, size), within: leg.index < size };
}

/** The node at `legs` (seek_exact_path), or undefined. */
function seek(root: JsonNode, legs: readonly Leg[]): JsonNode | undefined {
  let node: JsonNode | undefined = root;
  for (const leg of legs) {
    if (!node) return undefined;
    if (node.kind === 'array' && leg.kind === 'cell') {
      const { position, within } = cellPosition(leg, node.items.length);
      node = within ? node.items[position] : undefined;
    } else if (node.kind === 'object' && leg.kind === 'member') {
      node = node.members.get(leg.name);
    } else return undefined;
  }
  return node;
}

/** Applies the changes in order to the document `beforeText`; returns the new document's text. */
export function applyJsonDiffs(beforeText: string, diffs: readonly JsonDiff[], column: string): string {
  let root = parseCanonicalJson(beforeText);
  for (const d of diffs) {
    const rejected = (why: string): FloeError =>
      new FloeError(
        'source.mysql.binlog',
        'invalid-data',
        `partial JSON update of ${column}: expected ${d.operation.toUpperCase()} ${d.path} to apply to the before image, but ${why}; the before image is not the document the server changed. Set binlog_row_value_options='' on the server (and in the sessions that set it) and re-snapshot the table`,
      );
    const legs = parsePath(d.path);
    if (legs.length === 0) {
      // json_diff.cc asserts a non-empty path; a whole-document change is logged in full instead
      if (d.operation !== 'replace') throw rejected('the path is the whole document');
      root = parseCanonicalJson(d.value!);
      continue;
    }
    const parent = seek(root, legs.slice(0, -1));
    const leg = legs[legs.length - 1]!;
    if (!parent) throw rejected('its parent is not in the document');
    if (d.operation === 'replace') {
      if (parent.kind === 'object' && leg.kind === 'member' && parent.members.has(leg.name)) parent.members.set(leg.name, parseCanonicalJson(d.value!));
      else if (parent.kind === 'array' && leg.kind === 'cell' && cellPosition(leg, parent.items.length).within) parent.items[cellPosition(leg, parent.items.length).position] = parseCanonicalJson(d.value!);
      else throw rejected('the value to replace is not there');
    } else if (d.operation === 'insert') {
      if (parent.kind === 'object' && leg.kind === 'member') {
        if (parent.members.has(leg.name)) throw rejected('the member exists already');
        parent.members.set(leg.name, parseCanonicalJson(d.value!));
      } else if (parent.kind === 'array' && leg.kind === 'cell') {
        parent.items.splice(cellPosition(leg, parent.items.length).position, 0, parseCanonicalJson(d.value!));
      } else throw rejected(`the parent is not ${leg.kind === 'member' ? 'an object' : 'an array'}`);
    } else if (parent.kind === 'object' && leg.kind === 'member' && parent.members.has(leg.name)) {
      parent.members.delete(leg.name);
    } else if (parent.kind === 'array' && leg.kind === 'cell' && cellPosition(leg, parent.items.length).within) {
      parent.items.splice(cellPosition(leg, parent.items.length).position, 1);
    } else {
      throw rejected('the value to remove is not there');
    }
  }
  return canonicalJsonText(root);
}
