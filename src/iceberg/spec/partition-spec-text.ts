/**
 * Partition specs written by people in floe's config: `day(created_at)`, `bucket(16, id)`,
 * `truncate(4, name)`, `identity(region)` or a bare column name, comma-separated or as a list. Spark's
 * plural forms (`days(ts)`, `years`, `months`, `hours`) and the argument order `truncate(name, 4)` are
 * accepted too.
 *
 * Field ids are assigned from 1000 (spec "Partition Evolution"; Java `PartitionSpec.Builder`) and field
 * names follow Java's defaults: the column name for identity, `<col>_bucket`, `<col>_trunc`,
 * `<col>_year`, `<col>_month`, `<col>_day`, `<col>_hour`, `<col>_null` for void. Like Java, a partition
 * name may not repeat and may not equal a schema column other than an identity partition's own source.
 */
import { FloeError } from '../../util/errors.js';
import { PARTITION_FIELD_ID_START, transformToString, type PartitionField, type PartitionSpec, type Transform } from './partition.js';
import type { Schema } from './schema.js';
import { canTransform } from './transforms.js';
import { typeToString } from './types.js';

const SUBSYSTEM = 'iceberg.partition-spec';

const ALIASES: Record<string, Transform['kind']> = {
  identity: 'identity',
  year: 'year',
  years: 'year',
  month: 'month',
  months: 'month',
  day: 'day',
  days: 'day',
  date: 'day',
  hour: 'hour',
  hours: 'hour',
  bucket: 'bucket',
  truncate: 'truncate',
  void: 'void',
};

/** Java's default partition field name for a transform of a source column. */
function defaultPartitionFieldName(transform: Transform, sourceName: string): string {
  switch (transform.kind) {
    case 'identity':
      return sourceName;
    case 'bucket':
      return `${sourceName}_bucket`;
    case 'truncate':
      return `${sourceName}_trunc`;
    case 'void':
      return `${sourceName}_null`;
    default:
      return `${sourceName}_${transform.kind}`;
  }
}

/** Splits "day(ts), bucket(16, id)" at the commas outside parentheses. */
function splitTopLevel(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out.map((s) => s.trim()).filter((s) => s.length > 0);
}

function bad(term: string, why: string): FloeError {
  return new FloeError(
    SUBSYSTEM,
    'config',
    `partition term ${JSON.stringify(term)}: ${why}; expected a column name or identity(col), year(col), month(col), day(col), hour(col), bucket(N, col), truncate(W, col)`,
  );
}

function parseTerm(term: string): { transform: Transform; column: string } {
  const call = /^([A-Za-z_]+)\s*\((.*)\)$/s.exec(term);
  if (!call) {
    if (/[()\s,]/.test(term)) throw bad(term, 'not a column name or a transform call');
    return { transform: { kind: 'identity' }, column: term };
  }
  const kind = ALIASES[call[1]!.toLowerCase()];
  if (!kind) throw bad(term, `unknown transform ${call[1]}`);
  const args = call[2]!.split(',').map((a) => a.trim());
  if (kind === 'bucket' || kind === 'truncate') {
    if (args.length !== 2) throw bad(term, `${kind} takes a number and a column`);
    const numberIndex = /^\d+$/.test(args[0]!) ? 0 : /^\d+$/.test(args[1]!) ? 1 : -1;
    if (numberIndex < 0) throw bad(term, `${kind} needs a positive integer argument`);
    const n = Number(args[numberIndex]);
    if (!Number.isSafeInteger(n) || n <= 0 || n > 2_147_483_647) throw bad(term, `${kind} width must be between 1 and 2147483647, found ${args[numberIndex]}`);
    const column = args[1 - numberIndex]!;
    return { transform: kind === 'bucket' ? { kind, n } : { kind, width: n }, column };
  }
  if (args.length !== 1 || args[0] === '') throw bad(term, `${kind} takes exactly one column`);
  return { transform: { kind } as Transform, column: args[0]! };
}

/**
 * A partition spec for `schema` from human text: one string ("day(ts), bucket(16, id)") or a list of
 * terms. An empty text or list gives the unpartitioned spec. Column names may be dotted paths into
 * structs. Field ids are `firstFieldId`, `firstFieldId + 1`, …
 */
export function parsePartitionSpec(
  text: string | readonly string[],
  schema: Schema,
  options: { specId?: number; firstFieldId?: number } = {},
): PartitionSpec {
  const terms = typeof text === 'string' ? splitTopLevel(text) : text.flatMap((t) => splitTopLevel(t));
  const fields: PartitionField[] = [];
  const names = new Set<string>();
  const seen = new Set<string>();
  let nextId = options.firstFieldId ?? PARTITION_FIELD_ID_START;
  for (const term of terms) {
    const { transform, column } = parseTerm(term);
    const source = schema.findFieldByName(column);
    if (!source) {
      throw new FloeError(SUBSYSTEM, 'config', `partition term ${JSON.stringify(term)}: column ${JSON.stringify(column)} is not in the table schema (columns: ${schema.fields.map((f) => f.name).join(', ')})`);
    }
    if (!canTransform(transform, source.type) || transform.kind === 'void') {
      throw new FloeError(SUBSYSTEM, 'config', `partition term ${JSON.stringify(term)}: ${transformToString(transform)} cannot be applied to column ${column} of type ${typeToString(source.type)}`);
    }
    const key = `${source.id}:${transformToString(transform)}`;
    if (seen.has(key)) throw new FloeError(SUBSYSTEM, 'config', `partition term ${JSON.stringify(term)} repeats an earlier partition field`);
    seen.add(key);
    const name = defaultPartitionFieldName(transform, column);
    const clash = schema.findFieldByName(name);
    if (names.has(name) || (clash && !(transform.kind === 'identity' && clash.id === source.id))) {
      throw new FloeError(SUBSYSTEM, 'config', `partition term ${JSON.stringify(term)}: partition field name ${name} is already used by ${names.has(name) ? 'another partition field' : 'a schema column'}`);
    }
    names.add(name);
    fields.push({ sourceId: source.id, fieldId: nextId++, name, transform });
  }
  return { specId: options.specId ?? 0, fields };
}
