/**
 * What the interop suites expect of each engine reading a table floe wrote: the facts of the lake
 * table that decide it (read from the table itself), the limitations the engines document (asserted
 * as their exact refusal), the engine bugs they still have (asserted to still read wrong rows), and
 * the verdict on one read against floe scan's lines.
 */
import type { FileIO } from '../../../src/io/file-io.js';
import type { Catalog, TableIdentifier } from '../../../src/iceberg/metadata/catalog.js';
import type { Transform } from '../../../src/iceberg/spec/partition.js';
import { planScan, readTableRows } from '../../../src/iceberg/scan/index.js';
import { loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { multisetDifference } from '../../e2e/support/lake-compare.js';
import { chunkCodecs } from '../../support/parquet-footer.js';
import type { Engine, EngineRead } from './engines.js';
import type { CellResult } from './interop-results.js';

/** PyIceberg 0.12's refusal at scan planning (pyiceberg/table/__init__.py), verbatim. */
const PYICEBERG_EQUALITY_DELETES = 'ValueError: PyIceberg does not yet support equality deletes: https://github.com/apache/iceberg/issues/6568';
/** Iceberg's Spark type conversion (TypeToSparkType) has no Spark type for Iceberg `time`. */
const SPARK_TIME = 'Spark does not support time fields';

/** What a lake table holds, read from it (which limitations and bugs apply follows from it). */
export interface TableFacts {
  partitioned: boolean;
  spec: string;
  equality: number;
  position: number;
  dv: number;
  hasTime: boolean;
  /** A live row holds null in the one column an equality delete file of the table compares. */
  nullsInEqualityField: boolean;
  /** The codecs of the live data files' and Parquet delete files' column chunks (hyparquet's names: 'ZSTD', …). */
  codecs: { data: string[]; deletes: string[] };
}

/** Limitations the engines document: the test asserts the refusal, verbatim. */
const LIMITATIONS: { engine: Engine; applies: (t: TableFacts) => boolean; refusal: string }[] = [
  { engine: 'pyiceberg', applies: (t) => t.equality > 0, refusal: PYICEBERG_EQUALITY_DELETES },
  { engine: 'spark', applies: (t) => t.hasTime, refusal: SPARK_TIME },
];

/**
 * Engine bugs, not limitations: the test asserts the engine still gets these tables wrong, so that
 * it fails (and this entry goes) the day the engine is fixed.
 *
 * DuckDB 1.4.4's iceberg_scan drops live rows of a partitioned table whose equality deletes are
 * written under the table's unpartitioned spec (global equality deletes — what floe writes for a
 * keyed partitioned v2 table, since a delete by key cannot know the old row's partition; spec: "the
 * delete file's partition spec is unpartitioned" makes it apply to every partition). Older data files
 * lose every row, not only the deleted keys, and the count varies with `SET threads`. A table written
 * by Iceberg Java 1.12 alone (day + bucket partitions, one global equality delete) reads the same way,
 * while Spark, Trino and IcebergGenerics read all of these tables as floe does. DuckDB 1.5.5 (the
 * duckdb-extension-iceberg wheels) reads them correctly. Through the REST catalog DuckDB reads with
 * the same scan code.
 */
const KNOWN_BUGS: { engine: Engine; applies: (t: TableFacts) => boolean; what: string }[] = [
  { engine: 'duckdb', applies: (t) => t.partitioned && t.equality > 0, what: 'DuckDB 1.4.4 drops rows of partitioned tables with global equality deletes' },
  // DuckDB 1.4.4 also drops every live row that holds null in the one column an equality delete
  // compares (cascade_notes: the notes without a parent, whose parent_id no delete names), through
  // iceberg_scan and ATTACH, local and on S3 — as if it kept rows where NOT (col = value) is true,
  // which is null for a null column (a whole-row delete of a keyless table is not hit: another
  // column differs). Spec: a delete matches a row only where every compared value equals the
  // delete's, null only to null (format/spec.md, "Equality Delete Files"). Spark, Trino, Iceberg
  // Java and floe keep those rows.
  { engine: 'duckdb', applies: (t) => t.nullsInEqualityField, what: 'DuckDB 1.4.4 drops rows holding null in the column of a one-column equality delete' },
];

export async function readFacts(catalog: Catalog, identifier: TableIdentifier): Promise<TableFacts> {
  const t = await loadCatalogTable(catalog, identifier);
  const m = t.metadata;
  const plan = await planScan(t.io, m);
  const count = (pick: (d: (typeof plan.tasks)[number]['deletes']) => { file: { filePath: string } }[]) => new Set(plan.tasks.flatMap((task) => pick(task.deletes).map((r) => r.file.filePath))).size;
  const schema = m.schemas.find((x) => x.schemaId === m.currentSchemaId)!;
  const singleIds = new Set(plan.tasks.flatMap((task) => task.deletes.equality.flatMap((r) => (r.file.equalityIds?.length === 1 ? r.file.equalityIds : []))));
  const compared = schema.fields.flatMap((f, i) => (singleIds.has(f.id) ? [i] : []));
  const nullsInEqualityField = compared.length > 0 && (await readTableRows(t)).some((row) => compared.some((i) => row[i] === null || row[i] === undefined));
  const spec = m.partitionSpecs.find((s) => s.specId === m.defaultSpecId)!;
  const name = (sourceId: number) => schema.fields.find((f) => f.id === sourceId)?.name ?? `#${sourceId}`;
  return {
    partitioned: spec.fields.length > 0,
    spec: spec.fields.length === 0 ? 'unpartitioned' : `partitioned by ${spec.fields.map((f) => transformText(f.transform, name(f.sourceId))).join(', ')}`,
    equality: count((d) => d.equality),
    position: count((d) => d.position),
    dv: count((d) => (d.dv ? [d.dv] : [])),
    hasTime: schema.fields.some((f) => f.type.kind === 'time'),
    nullsInEqualityField,
    codecs: {
      data: await parquetCodecs(t.io, plan.tasks.map((task) => task.file.filePath)),
      deletes: await parquetCodecs(t.io, plan.tasks.flatMap((task) => [...task.deletes.equality, ...task.deletes.position].map((r) => r.file.filePath))),
    },
  };
}

/** The codecs of the column chunks of Parquet files, each once, sorted. */
async function parquetCodecs(io: FileIO, paths: readonly string[]): Promise<string[]> {
  const codecs = new Set<string>();
  for (const path of new Set(paths)) for (const c of chunkCodecs(await io.read(path))) codecs.add(c);
  return [...codecs].sort();
}

/** A partition field as floe's `partitionBy` spells it. */
function transformText(t: Transform, column: string): string {
  if (t.kind === 'identity') return column;
  if (t.kind === 'bucket') return `bucket(${t.n}, ${column})`;
  if (t.kind === 'truncate') return `truncate(${t.width}, ${column})`;
  return `${t.kind}(${column})`;
}

/**
 * One engine's read of a table against floe scan's lines: the matrix cell it earns, or the problem
 * (`label` names the table in it). A known bug must still read wrong rows, a documented limitation
 * must refuse with its exact message, anything else must read floe scan's lines exactly.
 */
export function judgeRead(engine: Engine, facts: TableFacts, read: EngineRead, expected: readonly string[], label: string): { cell: CellResult; problem?: undefined } | { cell?: undefined; problem: string } {
  const bug = KNOWN_BUGS.find((b) => b.engine === engine && b.applies(facts));
  const limitation = LIMITATIONS.find((l) => l.engine === engine && l.applies(facts));
  if (bug !== undefined) {
    if (read.code !== 0) return { problem: `${label}: known bug (${bug.what}) expected a wrong read, got exit ${read.code}: ${read.stderr.slice(-500)}` };
    if (read.lines.length === expected.length && multisetDifference(expected, read.lines, 1).missing.length === 0) return { problem: `${label}: reads correctly now: ${bug.what} is fixed, remove it from KNOWN_BUGS` };
    return { cell: { result: 'wrong-rows', bug: bug.what } };
  }
  if (limitation !== undefined) {
    if (read.refusal !== limitation.refusal) return { problem: `${label}: expected ${engine}'s documented refusal "${limitation.refusal}", got exit ${read.code}: ${read.refusal ?? read.stderr.slice(-500)}` };
    return { cell: { result: 'refused', message: limitation.refusal } };
  }
  if (read.code !== 0) return { problem: `${label}: exit ${read.code}: ${read.refusal ?? read.stderr.slice(-1500)}` };
  const diff = multisetDifference(expected, read.lines, 3);
  if (diff.missing.length > 0 || diff.unexpected.length > 0 || read.lines.length !== expected.length) {
    return { problem: `${label}: ${read.lines.length} lines vs floe scan's ${expected.length}; floe only: ${diff.missing.join(' | ')}; ${engine} only: ${diff.unexpected.join(' | ')}` };
  }
  return { cell: { result: 'identical' } };
}
