/**
 * The Grafana dashboard in grafana/floe-dashboard.json charts every metric floe exports, and no
 * metric floe does not export (a renamed metric would leave an empty panel nobody notices).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PrometheusMetrics } from '../../../src/pipeline/observe/metrics.js';

describe('grafana/floe-dashboard.json', () => {
  it('charts exactly the metrics floe exports', async () => {
    const dashboard = JSON.parse(readFileSync(new URL('../../../grafana/floe-dashboard.json', import.meta.url), 'utf8')) as { panels: { targets: { expr: string }[] }[] };
    const used = new Set<string>();
    for (const p of dashboard.panels) for (const t of p.targets) for (const m of t.expr.matchAll(/\b((?:floe|process)_[a-z_]+?)(?:_bucket|_sum|_count)?\b(?=[{[\s)]|$)/g)) used.add(m[1]);
    const exported = new Set((await new PrometheusMetrics().registry.getMetricsAsJSON()).map((m) => m.name));
    const floeMetrics = [...exported].filter((n) => n.startsWith('floe_'));
    for (const name of used) expect(exported.has(name), `dashboard uses ${name}, which floe does not export`).toBe(true);
    for (const name of floeMetrics) expect(used.has(name), `no panel charts ${name}`).toBe(true);
  });
});
