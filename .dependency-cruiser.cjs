/**
 * floe's layer rules, checked by `npm run lint` (and .ci/run). From the bottom up (docs/architecture.md §1):
 *
 *   util, model      value types and helpers; import nothing of floe above them
 *   io               the FileIO seam (local, S3): a leaf over util
 *   config           the YAML schema: util and model only
 *   source           MySQL: never the lake (iceberg, catalog), never the pipeline; in its binlog/,
 *                    rows/ (floe's row decoder) never reaches zongji or binlog/zongji/
 *   iceberg          the table format, writer, maintenance; the catalog *interface* lives here
 *                    (src/iceberg/metadata/catalog.ts) so it imports no catalog, pipeline, cli, source or demo
 *   catalog          filesystem, SQL and REST catalogs and the REST server: iceberg, io, util, model, config
 *   pipeline         joins source and lake; imports MySQL only through src/source/mysql/index.ts
 *   cli, demo        the commands; the same MySQL surface rule
 *
 * Parsed with swc (the TypeScript compiler 7 has no JavaScript API for dependency-cruiser to use).
 */
const below = (from, forbidden, comment) => ({
  name: `${from}-layer`,
  comment,
  severity: 'error',
  from: { path: `^src/${from}/` },
  to: { path: `^src/(${forbidden.join('|')})/` },
});

module.exports = {
  forbidden: [
    { name: 'no-circular', comment: 'an import cycle: split the shared part into its own module', severity: 'error', from: {}, to: { circular: true } },
    below('util', ['model', 'io', 'config', 'source', 'iceberg', 'catalog', 'pipeline', 'cli', 'demo'], 'util is the bottom layer'),
    below('model', ['io', 'config', 'source', 'iceberg', 'catalog', 'pipeline', 'cli', 'demo'], 'model holds value types only'),
    below('io', ['model', 'config', 'source', 'iceberg', 'catalog', 'pipeline', 'cli', 'demo'], 'io is a leaf over util'),
    below('config', ['io', 'source', 'iceberg', 'catalog', 'pipeline', 'cli', 'demo'], 'config is the schema of the YAML file'),
    below('source', ['iceberg', 'catalog', 'pipeline', 'cli', 'demo'], 'the source never imports the lake or the pipeline'),
    below('iceberg', ['catalog', 'pipeline', 'cli', 'source', 'demo'], 'the table layer depends on the catalog seam (src/iceberg/metadata/catalog.ts), never on a catalog'),
    below('catalog', ['source', 'pipeline', 'cli', 'demo'], 'catalogs hold table pointers; they know nothing of MySQL or the pipeline'),
    below('pipeline', ['cli', 'demo'], 'the pipeline is driven by the commands, never the other way round'),
    // inside iceberg, the upsert path from the bottom up: table (commits) · keyindex (the key index of
    // DV upserts) · writer (change writers and sinks) · maintenance (compaction writes with the
    // writer) · checkpoint (the table committer, over all of them)
    below('iceberg/table', ['iceberg/keyindex', 'iceberg/writer', 'iceberg/maintenance', 'iceberg/checkpoint'], 'the commit engine knows nothing of the writers above it'),
    below('iceberg/keyindex', ['iceberg/writer', 'iceberg/maintenance', 'iceberg/checkpoint'], 'the key index is what the writer looks rows up in, never the other way round'),
    below('iceberg/writer', ['iceberg/maintenance', 'iceberg/checkpoint'], 'the change writers are used by compaction and the committer, and use neither'),
    below('iceberg/maintenance', ['iceberg/checkpoint'], 'maintenance commits through the table layer, not the checkpoint committer'),
    {
      name: 'mysql-surface',
      comment: 'pipeline, cli and demo use the MySQL source through src/source/mysql/index.ts only',
      severity: 'error',
      from: { path: '^src/(pipeline|cli|demo)/' },
      to: { path: '^src/source/mysql/', pathNot: '^src/source/mysql/index[.]ts$' },
    },
    {
      name: 'row-decoder-without-zongji',
      comment: "floe's row decoder (binlog/rows/) reads event bytes itself: it never imports zongji or the code that drives it (binlog/zongji/)",
      severity: 'error',
      from: { path: '^src/source/mysql/binlog/rows/' },
      to: { path: '^src/source/mysql/binlog/zongji/|(^|/)node_modules/@vlasky/zongji/' },
    },
    { name: 'no-test-code-in-src', comment: 'src never imports tests, benchmarks or scripts', severity: 'error', from: { path: '^src/' }, to: { path: '^(test|bench|scripts|engines)/' } },
  ],
  options: {
    parser: 'swc',
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
