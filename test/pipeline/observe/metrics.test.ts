/**
 * Metrics: what the runner reports through `Metrics` is scraped over real HTTP from `/metrics` in
 * the Prometheus text format, per table.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PrometheusMetrics } from '../../../src/pipeline/observe/metrics.js';
import { startMetricsServer, type MetricsServer } from '../../../src/pipeline/observe/metrics-server.js';

let server: MetricsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** `name{labels} value` lines of a scrape, as a map. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

describe('Prometheus metrics', () => {
  it('serves rows, binlog events, lag, commit durations, files and bytes per table on /metrics', async () => {
    const metrics = new PrometheusMetrics();
    server = await startMetricsServer(metrics.registry, { port: 0, host: '127.0.0.1' });
    metrics.rowsWritten('shop.orders', 'snapshot', 400);
    metrics.rowsWritten('shop.orders', 'streaming', 3);
    metrics.rowsWritten('shop.orders', 'streaming', 2);
    metrics.rowsWritten('shop.customers', 'snapshot', 120);
    metrics.binlogEvents('shop.orders', 7);
    metrics.readerLag(1.5);
    metrics.tableLag('shop.orders', 2.25);
    metrics.commitDuration('shop.orders', 0.04);
    metrics.commitDuration('shop.orders', 0.3);
    metrics.filesWritten('shop.orders', 'data', 2, 10_240);
    metrics.filesWritten('shop.orders', 'delete', 1, 512);
    metrics.tableHealth('shop.orders', { dataFiles: 12, dataBytes: 1200n, averageDataFileBytes: 100, deleteFiles: { equality: 3, position: 0, deletionVectors: 4 }, deletedRows: { equality: 30n, position: 9n }, snapshots: 11, manifests: { data: 5, deletes: 2 }, metadataBytes: 4096 });

    const response = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    const s = samples(text);
    expect(s.get('floe_rows_written_total{table="shop.orders",phase="snapshot"}')).toBe(400);
    expect(s.get('floe_rows_written_total{table="shop.orders",phase="streaming"}')).toBe(5);
    expect(s.get('floe_rows_written_total{table="shop.customers",phase="snapshot"}')).toBe(120);
    expect(s.get('floe_binlog_events_total{table="shop.orders"}')).toBe(7);
    expect(s.get('floe_replication_lag_seconds')).toBe(1.5);
    expect(s.get('floe_table_lag_seconds{table="shop.orders"}')).toBe(2.25);
    expect(s.get('floe_commit_duration_seconds_count{table="shop.orders"}')).toBe(2);
    expect(s.get('floe_commit_duration_seconds_sum{table="shop.orders"}')).toBeCloseTo(0.34, 10);
    expect(s.get('floe_commit_duration_seconds_bucket{le="0.05",table="shop.orders"}')).toBe(1);
    expect(s.get('floe_commit_duration_seconds_bucket{le="0.5",table="shop.orders"}')).toBe(2);
    expect(s.get('floe_files_written_total{table="shop.orders",content="data"}')).toBe(2);
    expect(s.get('floe_files_written_total{table="shop.orders",content="delete"}')).toBe(1);
    expect(s.get('floe_bytes_written_total{table="shop.orders",content="data"}')).toBe(10_240);
    expect(s.get('floe_table_data_files{table="shop.orders"}')).toBe(12);
    expect(s.get('floe_table_average_data_file_bytes{table="shop.orders"}')).toBe(100);
    expect(s.get('floe_table_delete_files{table="shop.orders",kind="equality"}')).toBe(3);
    expect(s.get('floe_table_delete_files{table="shop.orders",kind="dv"}')).toBe(4);
    expect(s.get('floe_table_deleted_rows{table="shop.orders",kind="position"}')).toBe(9);
    expect(s.get('floe_table_snapshots{table="shop.orders"}')).toBe(11);
    expect(s.get('floe_table_metadata_bytes{table="shop.orders"}')).toBe(4096);
    expect(s.get('floe_table_manifests{table="shop.orders",content="data"}')).toBe(5);
    expect(s.get('floe_table_manifests{table="shop.orders",content="deletes"}')).toBe(2);
    expect(text).toContain('# TYPE floe_commit_duration_seconds histogram');
    // prom-client's process metrics come along (RSS, CPU).
    expect(text).toContain('process_resident_memory_bytes');
  });

  it('answers /healthz, 404 elsewhere, and reports a port in use as a config error', async () => {
    const metrics = new PrometheusMetrics({ defaultMetrics: false });
    server = await startMetricsServer(metrics.registry, { port: 0, host: '127.0.0.1' });
    expect(await (await fetch(`http://127.0.0.1:${server.port}/healthz`)).text()).toBe('ok\n');
    expect((await fetch(`http://127.0.0.1:${server.port}/nothing`)).status).toBe(404);
    await expect(startMetricsServer(metrics.registry, { port: server.port, host: '127.0.0.1' })).rejects.toThrow(
      new RegExp(`cannot serve metrics on port ${server.port}.*metrics\\.port`),
    );
  });

  it('keeps registries apart: two pipelines in one process do not share counters', async () => {
    const a = new PrometheusMetrics({ defaultMetrics: false });
    const b = new PrometheusMetrics({ defaultMetrics: false });
    a.rowsWritten('db.t', 'snapshot', 5);
    expect(await b.registry.metrics()).not.toContain('floe_rows_written_total{');
    expect(await a.registry.metrics()).toContain('floe_rows_written_total{table="db.t",phase="snapshot"} 5');
  });
});
