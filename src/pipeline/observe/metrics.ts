/**
 * Pipeline metrics in Prometheus form. The runner reports through the small
 * `Metrics` interface; `PrometheusMetrics` keeps them in its own prom-client registry (never the
 * global one, so several pipelines or tests can live in one process), and metrics-server.ts serves
 * the registry on `/metrics`.
 *
 * | metric                                  | type      | labels          | meaning                                            |
 * |-----------------------------------------|-----------|-----------------|----------------------------------------------------|
 * | floe_rows_written_total                 | counter   | table, phase    | rows written to the Iceberg table (phase: snapshot / streaming); rate() = rows/s |
 * | floe_binlog_events_total                | counter   | table           | row changes read from the binlog; rate() = events/s |
 * | floe_replication_lag_seconds            | gauge     |                 | now − source commit time of the last binlog event read |
 * | floe_table_lag_seconds                  | gauge     | table           | now − source commit time of what the table has committed |
 * | floe_commit_duration_seconds            | histogram | table           | one Iceberg commit (flush + manifests + catalog swap) |
 * | floe_files_written_total                | counter   | table, content  | files written (content: data / delete)             |
 * | floe_bytes_written_total                | counter   | table, content  | bytes of those files                               |
 * | floe_table_data_files                   | gauge     | table           | live data files (at the last maintenance round)    |
 * | floe_table_average_data_file_bytes      | gauge     | table           | their average size                                 |
 * | floe_table_delete_files                 | gauge     | table, kind     | live delete files (kind: equality / position / dv) |
 * | floe_table_deleted_rows                 | gauge     | table, kind     | rows those delete files remove (equality / position) |
 * | floe_table_snapshots                    | gauge     | table           | snapshots retained in the metadata                 |
 * | floe_table_metadata_bytes               | gauge     | table           | size of the current metadata.json                  |
 * | floe_verify_differing_rows              | gauge     | table           | rows the last scheduled verification found differing (only in MySQL, only in the lake, or different) |
 * | floe_verify_differing_chunks            | gauge     | table           | chunks it found differing                          |
 * | floe_verify_unverified                  | gauge     | table           | 1 when it could not verify the table, else 0       |
 * | floe_verify_last_run_timestamp_seconds  | gauge     |                 | when the last scheduled verification finished      |
 * | process_* / nodejs_*                    |           |                 | prom-client's default process metrics (CPU, RSS, event loop lag) |
 *
 * Tables are labelled with their source name `db.table`.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { TableHealth } from '../../iceberg/maintenance/table-health.js';

export type RowPhase = 'snapshot' | 'streaming';
export type FileContent = 'data' | 'delete';

/** What the runner reports. Every method is cheap and never throws. */
export interface Metrics {
  /** `rows` more rows written (appended or upserted) to `table`'s Iceberg table. */
  rowsWritten(table: string, phase: RowPhase, rows: number): void;
  /** `events` more row changes for `table` read from the binlog. */
  binlogEvents(table: string, events: number): void;
  /** Seconds between now and the source commit time of the last binlog event read. */
  readerLag(seconds: number): void;
  /** Seconds between now and the source commit time of what `table` has committed to Iceberg. */
  tableLag(table: string, seconds: number): void;
  /** Duration of one commit to `table`. */
  commitDuration(table: string, seconds: number): void;
  /** Files (and their bytes) written for `table`. */
  filesWritten(table: string, content: FileContent, files: number, bytes: number): void;
  /** The table's health (iceberg/maintenance/table-health.ts), measured at a maintenance round. */
  tableHealth?(table: string, health: TableHealth): void;
  /** A scheduled verification's result for `table` (differing rows and chunks; whether it could be verified). */
  verification?(table: string, result: { differingRows: number; differingChunks: number; verified: boolean }): void;
  /** A scheduled verification finished (at `timeMs`). */
  verificationFinished?(timeMs: number): void;
}

export class PrometheusMetrics implements Metrics {
  readonly registry: Registry;
  private readonly rows: Counter<'table' | 'phase'>;
  private readonly events: Counter<'table'>;
  private readonly lag: Gauge;
  private readonly tableLagGauge: Gauge<'table'>;
  private readonly commits: Histogram<'table'>;
  private readonly files: Counter<'table' | 'content'>;
  private readonly bytes: Counter<'table' | 'content'>;
  private readonly health: {
    dataFiles: Gauge<'table'>;
    averageFile: Gauge<'table'>;
    deleteFiles: Gauge<'table' | 'kind'>;
    deletedRows: Gauge<'table' | 'kind'>;
    snapshots: Gauge<'table'>;
    manifests: Gauge<'table' | 'content'>;
    metadataBytes: Gauge<'table'>;
  };
  private readonly verify: { rows: Gauge<'table'>; chunks: Gauge<'table'>; unverified: Gauge<'table'>; last: Gauge };

  constructor(options: { registry?: Registry; defaultMetrics?: boolean } = {}) {
    this.registry = options.registry ?? new Registry();
    const registers = [this.registry];
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.rows = new Counter({ name: 'floe_rows_written_total', help: 'Rows written to Iceberg tables', labelNames: ['table', 'phase'], registers });
    this.events = new Counter({ name: 'floe_binlog_events_total', help: 'Row changes read from the binlog', labelNames: ['table'], registers });
    this.lag = new Gauge({ name: 'floe_replication_lag_seconds', help: 'Seconds between now and the source commit time of the last binlog event read', registers });
    this.tableLagGauge = new Gauge({ name: 'floe_table_lag_seconds', help: 'Seconds between now and the source commit time of what the table has committed', labelNames: ['table'], registers });
    this.commits = new Histogram({
      name: 'floe_commit_duration_seconds',
      help: 'Duration of Iceberg commits',
      labelNames: ['table'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.files = new Counter({ name: 'floe_files_written_total', help: 'Data and delete files written', labelNames: ['table', 'content'], registers });
    this.bytes = new Counter({ name: 'floe_bytes_written_total', help: 'Bytes of data and delete files written', labelNames: ['table', 'content'], registers });
    this.health = {
      dataFiles: new Gauge({ name: 'floe_table_data_files', help: 'Live data files of the table', labelNames: ['table'], registers }),
      averageFile: new Gauge({ name: 'floe_table_average_data_file_bytes', help: 'Average size of its live data files', labelNames: ['table'], registers }),
      deleteFiles: new Gauge({ name: 'floe_table_delete_files', help: 'Live delete files by kind (equality, position, dv)', labelNames: ['table', 'kind'], registers }),
      deletedRows: new Gauge({ name: 'floe_table_deleted_rows', help: 'Rows removed by live delete files, by kind (equality, position)', labelNames: ['table', 'kind'], registers }),
      snapshots: new Gauge({ name: 'floe_table_snapshots', help: 'Snapshots retained in the table metadata', labelNames: ['table'], registers }),
      manifests: new Gauge({ name: 'floe_table_manifests', help: 'Manifests of the current snapshot by content (data, deletes); maintenance.manifests rewrites them when small ones pile up', labelNames: ['table', 'content'], registers }),
      metadataBytes: new Gauge({ name: 'floe_table_metadata_bytes', help: 'Size of the current metadata.json', labelNames: ['table'], registers }),
    };
    this.verify = {
      rows: new Gauge({ name: 'floe_verify_differing_rows', help: 'Rows the last scheduled verification found differing between MySQL and the lake', labelNames: ['table'], registers }),
      chunks: new Gauge({ name: 'floe_verify_differing_chunks', help: 'Chunks the last scheduled verification found differing', labelNames: ['table'], registers }),
      unverified: new Gauge({ name: 'floe_verify_unverified', help: '1 when the last scheduled verification could not verify the table', labelNames: ['table'], registers }),
      last: new Gauge({ name: 'floe_verify_last_run_timestamp_seconds', help: 'When the last scheduled verification finished (Unix seconds)', registers }),
    };
  }

  rowsWritten(table: string, phase: RowPhase, rows: number): void {
    if (rows > 0) this.rows.inc({ table, phase }, rows);
  }
  binlogEvents(table: string, events: number): void {
    if (events > 0) this.events.inc({ table }, events);
  }
  readerLag(seconds: number): void {
    this.lag.set(Math.max(0, seconds));
  }
  tableLag(table: string, seconds: number): void {
    this.tableLagGauge.set({ table }, Math.max(0, seconds));
  }
  commitDuration(table: string, seconds: number): void {
    this.commits.observe({ table }, seconds);
  }
  filesWritten(table: string, content: FileContent, files: number, bytes: number): void {
    if (files > 0) this.files.inc({ table, content }, files);
    if (bytes > 0) this.bytes.inc({ table, content }, bytes);
  }

  verification(table: string, r: { differingRows: number; differingChunks: number; verified: boolean }): void {
    this.verify.rows.set({ table }, r.differingRows);
    this.verify.chunks.set({ table }, r.differingChunks);
    this.verify.unverified.set({ table }, r.verified ? 0 : 1);
  }
  verificationFinished(timeMs: number): void {
    this.verify.last.set(timeMs / 1000);
  }

  tableHealth(table: string, h: TableHealth): void {
    this.health.dataFiles.set({ table }, h.dataFiles);
    this.health.averageFile.set({ table }, h.averageDataFileBytes);
    this.health.deleteFiles.set({ table, kind: 'equality' }, h.deleteFiles.equality);
    this.health.deleteFiles.set({ table, kind: 'position' }, h.deleteFiles.position);
    this.health.deleteFiles.set({ table, kind: 'dv' }, h.deleteFiles.deletionVectors);
    this.health.deletedRows.set({ table, kind: 'equality' }, Number(h.deletedRows.equality));
    this.health.deletedRows.set({ table, kind: 'position' }, Number(h.deletedRows.position));
    this.health.snapshots.set({ table }, h.snapshots);
    this.health.manifests.set({ table, content: 'data' }, h.manifests.data);
    this.health.manifests.set({ table, content: 'deletes' }, h.manifests.deletes);
    if (h.metadataBytes !== undefined) this.health.metadataBytes.set({ table }, h.metadataBytes);
  }
}
