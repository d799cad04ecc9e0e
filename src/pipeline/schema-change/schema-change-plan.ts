/**
 * From a MySQL table change (source ddl-apply.ts: the column list after an ALTER TABLE and the
 * column changes leading there) to the Iceberg schema update of the table's lake copy (`evolve`
 * policy, docs/design.md §3, §5; format/spec.md "Schema Evolution", "Default values"):
 *
 * | MySQL                                   | Iceberg                                                     |
 * |-----------------------------------------|-------------------------------------------------------------|
 * | ADD COLUMN, literal DEFAULT             | add (v3: initial-default + write-default = the literal, so   |
 * |                                         | rows written before read as the default, as in MySQL)       |
 * | ADD COLUMN … NOT NULL without DEFAULT   | add with the type's implicit default (0, '', first ENUM      |
 * |                                         | label…) as initial-default — what MySQL gave existing rows  |
 * | ADD COLUMN, expression DEFAULT          | add without default; old rows read null (MySQL evaluated the |
 * |                                         | expression at ALTER time; noted in the log)                 |
 * | DROP COLUMN                             | drop (never the primary key: that is a key change)          |
 * | RENAME COLUMN / CHANGE a b              | rename — the field id stays, old files still read            |
 * | MODIFY / CHANGE to a wider type         | int→long, float→double, decimal(P,S)→decimal(P',S) P'>P,    |
 * |                                         | date→timestamp (v3); same Iceberg type (varchar length,     |
 * |                                         | text sizes, enum labels…) = no type change                  |
 * | NOT NULL → NULL                         | make optional                                               |
 * | SET/DROP DEFAULT, new literal default    | write-default (v3)                                          |
 * | COMMENT                                 | doc                                                         |
 *
 * Refused, with an error naming the statement, the table and what to do (re-snapshot the table):
 * narrowing or type-family changes (bigint→int, int→varchar, datetime→timestamp, decimal scale),
 * primary-key changes, actions that change rows without row events (CONVERT TO CHARACTER SET,
 * DROP/TRUNCATE PARTITION…), renames that collide, and column transforms that no longer match.
 *
 * Types, transforms (hash/mask → string, drop → absent) and write-defaults come from the pipeline's
 * own table mapping of the new MySQL definition (table-mapping.ts), so an evolved table looks
 * exactly like a table created from the new definition would — the start-up check then accepts it.
 * Planning is idempotent against the lake: a change the Iceberg schema already shows (a replay after
 * a restart between the schema commit and the next checkpoint) is skipped.
 */
import { evolveSchema, type SchemaChange } from '../../iceberg/spec/schema-update.js';
import type { TableMetadata } from '../../iceberg/spec/table-metadata.js';
import { typesEqual, typeToString, type NestedField, type PrimitiveType } from '../../iceberg/spec/types.js';
import type { Value } from '../../model/values.js';
import { implicitDefaultText } from '../../source/mysql/index.js';
import type { ColumnChange, TableEffect } from '../../source/mysql/index.js';
import { literalDefaultValue } from '../../source/mysql/index.js';
import { tableKey, type ColumnSchema } from '../../source/mysql/index.js';
import { mapColumn, mapTable, type MappedColumn, type TypeMappingOptions } from '../../source/mysql/index.js';
import { errorMessage } from '../../util/errors.js';
import { planTableMapping, type ColumnMapping, type MappingConfig, type TableMapping } from '../table-mapping.js';
import type { TransformLookup } from '../transforms.js';

export interface IcebergSchemaPlan {
  /** The schema update to commit (empty: the lake already matches). */
  readonly changes: readonly SchemaChange[];
  /** What an operator may want to know (replays skipped, lagging columns reconciled). */
  readonly notes: readonly string[];
  /** Where the lake will differ from MySQL (defaults MySQL gave existing rows that the lake cannot hold). */
  readonly warnings: readonly string[];
  /** Set when the change cannot be applied: why, and what to do. */
  readonly refusal?: string;
  /** The pipeline's mapping of the new definition (types, transforms, projection). */
  readonly mapping?: TableMapping;
}

export interface PlanInputs {
  readonly effect: Extract<TableEffect, { kind: 'alter' }>;
  /** The lake table as it is now. */
  readonly metadata: TableMetadata;
  readonly config: MappingConfig;
  readonly transforms: TransformLookup;
  readonly typeMapping?: TypeMappingOptions;
}

const RESNAPSHOT = 're-snapshot the table: stop floe, drop its Iceberg table (or rename it away), and start floe again so it copies the table with its new definition';

export function planIcebergSchemaChange(inputs: PlanInputs): IcebergSchemaPlan {
  const { effect, metadata, config, transforms } = inputs;
  const key = tableKey(effect.table);
  const schema = metadata.schemas.find((s) => s.schemaId === metadata.currentSchemaId)!;
  const v = metadata.formatVersion;
  const notes: string[] = [...effect.notes];
  const warnings: string[] = [];
  const refuse = (why: string): IcebergSchemaPlan => ({ changes: [], notes, warnings, refusal: `${why}; ${RESNAPSHOT}` });

  if (effect.primaryKeyChanged) {
    return refuse(`the primary key of ${key} changes from (${effect.before.primaryKey.join(', ') || 'none'}) to (${effect.after.primaryKey.join(', ') || 'none'}); the lake table's rows are identified by the old key (identifier fields)`);
  }
  if (effect.unsupported.length > 0) {
    return refuse(effect.unsupported.map((u) => `${u.text}: ${u.reason}`).join('; '));
  }

  let mapping: TableMapping;
  try {
    mapping = planTableMapping(mapTable(effect.after, inputs.typeMapping), config, transforms);
  } catch (e) {
    return refuse(`the new definition of ${key} cannot be mapped to Iceberg: ${errorMessage(e)}`);
  }
  const target = (name: string): ColumnMapping | undefined => mapping.columns.find((c) => c.name.toLowerCase() === name.toLowerCase());
  // the Iceberg schema as the changes so far leave it, by (lower-case) name
  const fields = new Map<string, NestedField>(schema.fields.map((f) => [f.name.toLowerCase(), f]));
  const identifierNames = new Set(schema.identifierFieldIds.map((id) => schema.findField(id)?.name.toLowerCase()));
  const changes: SchemaChange[] = [];
  const transformOf = (name: string) => transforms(effect.table.database, effect.table.table, name);

  for (const c of effect.changes) {
    const r = planOne(c);
    if (r) return refuse(r);
  }
  const r = reconcile();
  if (r) return refuse(r);
  if (changes.length > 0) {
    try {
      evolveSchema(metadata, changes); // the spec's rules, checked now so the refusal names the DDL
    } catch (e) {
      return refuse(`the Iceberg schema of ${key} cannot take this change: ${errorMessage(e)}`);
    }
  }
  return { changes, notes, warnings, mapping };

  /** Plans one column change; returns a refusal reason or undefined. */
  function planOne(c: ColumnChange): string | undefined {
    switch (c.kind) {
      case 'drop': {
        const f = fields.get(c.column.name.toLowerCase());
        if (!f) {
          notes.push(`DROP COLUMN ${c.column.name}: not in the lake table (${transformOf(c.column.name)?.kind === 'drop' ? 'dropped by a column transform' : 'already dropped; replay'})`);
          return undefined;
        }
        if (identifierNames.has(f.name.toLowerCase())) return `column ${c.column.name} is part of the primary key of ${key}`;
        changes.push({ kind: 'drop-column', name: f.name });
        fields.delete(f.name.toLowerCase());
        return undefined;
      }
      case 'rename': {
        const from = fields.get(c.from.name.toLowerCase());
        const to = fields.get(c.to.name.toLowerCase());
        const before = transformOf(c.from.name);
        const after = transformOf(c.to.name);
        if (JSON.stringify(before) !== JSON.stringify(after)) {
          return `column ${c.from.name} of ${key} is renamed to ${c.to.name}, and the column transforms configured for the two names differ (${before?.kind ?? 'none'} → ${after?.kind ?? 'none'}); configure the same transform for ${c.to.name} first`;
        }
        if (!from) {
          if (to) notes.push(`RENAME ${c.from.name} TO ${c.to.name}: the lake table already has ${c.to.name} (replay)`);
          return undefined; // dropped by a transform under both names
        }
        if (to && to !== from) return `column ${c.from.name} of ${key} is renamed to ${c.to.name}, but the lake table already has a different column ${to.name}`;
        if (from.name === c.to.name) return undefined;
        changes.push({ kind: 'rename-column', name: from.name, newName: c.to.name });
        fields.delete(from.name.toLowerCase());
        fields.set(c.to.name.toLowerCase(), { ...from, name: c.to.name });
        if (identifierNames.delete(from.name.toLowerCase())) identifierNames.add(c.to.name.toLowerCase());
        return undefined;
      }
      case 'modify': {
        const narrowing = integerNarrowing(c.before, c.after);
        if (narrowing) return `column ${c.after.name} of ${key} changes from ${c.before.columnType} to ${c.after.columnType}, which ${narrowing}`;
        return align(c.after, `${c.before.columnType} to ${c.after.columnType}`);
      }
      case 'add': {
        const t = target(c.column.name);
        if (!t) return undefined; // dropped by a transform
        const existing = fields.get(c.column.name.toLowerCase());
        if (existing) {
          if (typesEqual(existing.type, t.type)) {
            notes.push(`ADD COLUMN ${c.column.name}: the lake table already has it (replay)`);
            return undefined;
          }
          return `column ${c.column.name} is added to ${key} as ${typeToString(t.type)}, but the lake table already has ${c.column.name} as ${typeToString(existing.type)}`;
        }
        const initial = initialDefault(c.column, t, mapping, v, warnings);
        const add: SchemaChange = {
          kind: 'add-column',
          name: c.column.name,
          type: t.type,
          required: t.required && initial !== undefined && initial !== null,
          ...(c.column.comment ? { doc: c.column.comment } : {}),
          ...(initial !== undefined && initial !== null ? { defaultValue: initial } : {}),
        };
        changes.push(add);
        fields.set(c.column.name.toLowerCase(), { id: -1, name: c.column.name, required: add.required ?? false, type: t.type, ...(add.defaultValue !== undefined ? { writeDefault: add.defaultValue } : {}), ...(add.doc !== undefined ? { doc: add.doc } : {}) });
        return undefined;
      }
    }
  }

  /** Type, required-ness, write-default and doc of an existing lake field, aligned with the new definition. */
  function align(column: ColumnSchema, what: string): string | undefined {
    const f = fields.get(column.name.toLowerCase());
    const t = target(column.name);
    if (!f || !t) return undefined; // dropped by a transform
    let type = f.type;
    if (!typesEqual(f.type, t.type)) {
      if (!canWiden(f.type as PrimitiveType, t.type, v)) {
        return `column ${column.name} of ${key} changes (${what}): Iceberg ${typeToString(f.type)} → ${typeToString(t.type)} is not an allowed widening (int→long, float→double, decimal precision up with the same scale${v >= 3 ? ', date→timestamp' : ''}); old data files could not be read as the new type`;
      }
      changes.push({ kind: 'update-column-type', name: f.name, type: t.type });
      type = t.type;
    }
    let required = f.required;
    if (f.required && !t.required) {
      changes.push({ kind: 'make-optional', name: f.name });
      required = false;
    }
    let writeDefault = f.writeDefault;
    if (v >= 3) {
      const wanted = mapping.schema.fields.find((x) => x.id === t.fieldId)?.writeDefault;
      if (!sameValue(f.writeDefault, wanted) && !(wanted === undefined && f.required)) {
        changes.push({ kind: 'update-write-default', name: f.name, value: (wanted ?? null) as Value });
        writeDefault = wanted;
      }
    }
    const doc = column.comment || undefined;
    if ((f.doc ?? undefined) !== doc) changes.push({ kind: 'update-doc', name: f.name, doc });
    fields.set(f.name.toLowerCase(), { ...f, type, required, writeDefault, ...(doc !== undefined ? { doc } : {}) });
    return undefined;
  }

  /**
   * The columns the statement names, reconciled with the lake: when the "before" definition already
   * showed the statement's effect (a replay after a restart that stopped before the DDL), the
   * column changes are empty but the lake may still lag — renames, adds, drops and type changes of
   * those columns are planned from the difference. Columns the statement does not name are left
   * alone (any other difference is drift the start-up check reports).
   */
  function reconcile(): string | undefined {
    for (const rn of effect.renames) {
      const from = fields.get(rn.from.toLowerCase());
      if (!from || fields.has(rn.to.toLowerCase()) || !target(rn.to) || target(rn.from)) continue;
      if (JSON.stringify(transformOf(rn.from)) !== JSON.stringify(transformOf(rn.to))) {
        return `column ${rn.from} of ${key} is renamed to ${rn.to}, and the column transforms configured for the two names differ; configure the same transform for ${rn.to} first`;
      }
      changes.push({ kind: 'rename-column', name: from.name, newName: rn.to });
      fields.delete(from.name.toLowerCase());
      fields.set(rn.to.toLowerCase(), { ...from, name: rn.to });
      notes.push(`RENAME ${rn.from} TO ${rn.to}: applied to the lake, which still had ${rn.from}`);
    }
    for (const name of effect.mentioned) {
      const lower = name.toLowerCase();
      const t = target(name);
      const f = fields.get(lower);
      const column = effect.after.columns.find((c) => c.name.toLowerCase() === lower);
      if (t && column && !f) {
        const initial = initialDefault(column, t, mapping, v, warnings);
        const required = t.required && initial !== undefined && initial !== null;
        changes.push({ kind: 'add-column', name: column.name, type: t.type, required, ...(column.comment ? { doc: column.comment } : {}), ...(initial !== undefined && initial !== null ? { defaultValue: initial } : {}) });
        fields.set(lower, { id: -1, name: column.name, required, type: t.type, ...(initial !== undefined && initial !== null ? { writeDefault: initial } : {}), ...(column.comment ? { doc: column.comment } : {}) });
        notes.push(`ADD COLUMN ${column.name}: added to the lake, which did not have it yet`);
      } else if (!t && f && !column) {
        if (identifierNames.has(lower)) return `column ${name} is part of the primary key of ${key}`;
        changes.push({ kind: 'drop-column', name: f.name });
        fields.delete(lower);
        notes.push(`DROP COLUMN ${name}: dropped from the lake, which still had it`);
      } else if (t && f && column) {
        const why = align(column, `now ${column.columnType}`);
        if (why) return why;
      }
    }
    return undefined;
  }

  function initialDefault(column: ColumnSchema, t: ColumnMapping, m: TableMapping, formatVersion: number, out: string[]): Value | undefined {
    const where = `ADD COLUMN ${column.name}`;
    const d = column.default;
    let value: Value | undefined;
    if (column.generated) {
      out.push(`${where}: a generated column; rows written before read as null (MySQL computed their values)`);
      return undefined;
    }
    if (d.kind === 'expression') {
      out.push(`${where}: the default ${d.expression} is an expression, evaluated by MySQL for the existing rows at ALTER time; in the lake those rows read as null`);
      return undefined;
    }
    if (d.kind === 'null') return undefined;
    const mapped: MappedColumn = mapColumn(effect.table, column, inputs.typeMapping);
    if (d.kind === 'literal') {
      const lit = literalDefaultValue(mapped);
      if (!lit.literal) {
        out.push(`${where}: ${lit.reason}; rows written before read as null`);
        return undefined;
      }
      value = lit.value;
    } else {
      // NOT NULL without DEFAULT: MySQL fills existing rows with the type's implicit default
      const text = implicitDefaultText(column);
      if (text === undefined) {
        out.push(`${where}: NOT NULL without a default; MySQL filled the existing rows with an implicit value floe cannot reproduce for ${column.columnType}; they read as null`);
        return undefined;
      }
      const lit = literalDefaultValue({ ...mapped, column: { ...column, default: { kind: 'literal', literal: text } } });
      value = lit.literal ? lit.value : undefined;
    }
    if (value === null || value === undefined) return value;
    const transform = m.columns.find((x) => x.fieldId === t.fieldId)?.transform;
    const final = transform ? transform(value) : value;
    if (formatVersion < 3) {
      out.push(`${where}: format v2 tables cannot hold column defaults; rows written before read as null where MySQL gives them ${String(final)}`);
      return undefined;
    }
    return final;
  }
}

const INTEGER_RANK: Record<string, number> = { tinyint: 1, smallint: 2, mediumint: 3, int: 4, integer: 4, bigint: 5 };

/**
 * MySQL integer narrowing (fewer bytes): the server converted the stored values — clamping them
 * outside strict mode — without writing row events, so the lake could keep values MySQL no longer
 * has, even where the Iceberg type stays the same (smallint and int are both Iceberg int).
 */
function integerNarrowing(before: ColumnSchema, after: ColumnSchema): string | undefined {
  const a = INTEGER_RANK[before.dataType];
  const b = INTEGER_RANK[after.dataType];
  if (a === undefined || b === undefined || b >= a) return undefined;
  if (/^tinyint\(1\)/.test(before.columnType) && after.dataType === 'tinyint') return undefined;
  return 'narrows the column: MySQL rewrote the stored values (clamping those out of range unless in strict mode) without row events';
}

/** Spec promotions floe applies (format/spec.md "Schema Evolution"). */
function canWiden(from: PrimitiveType, to: PrimitiveType, formatVersion: number): boolean {
  if (from.kind === 'int' && to.kind === 'long') return true;
  if (from.kind === 'float' && to.kind === 'double') return true;
  if (from.kind === 'decimal' && to.kind === 'decimal') return to.scale === from.scale && to.precision > from.precision;
  if (formatVersion >= 3 && from.kind === 'date' && to.kind === 'timestamp') return true;
  return false;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return a.length === b.length && a.every((x, i) => x === b[i]);
  if (typeof a === 'bigint' || typeof b === 'bigint') return String(a) === String(b);
  return false;
}
