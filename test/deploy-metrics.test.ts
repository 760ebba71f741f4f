/**
 * The deployment kit's metrics side: deploy/prometheus.yml is a configuration Prometheus accepts,
 * and every query of deploy/grafana-dashboard.json is valid PromQL over families a real server
 * exposes (scraped here without a token, as SVC_PROMETHEUS_AUTH_TYPE=public allows).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, startSvc, type SvcProcess } from './helpers/server-process.js';
import { parseExposition, type Family } from './helpers/metrics.js';
import { missingTool } from './helpers/external-tools.js';

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}

const dashboard = JSON.parse(await readFile(join(repoRoot, 'deploy/grafana-dashboard.json'), 'utf8')) as { panels: Panel[]; templating: unknown };
const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
const expressions = panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
/** Grafana's variables, replaced as Grafana would before the query reaches Prometheus. */
const asPromql = (expr: string) => expr.replaceAll('$__rate_interval', '1m').replaceAll('$job', '.+');
const noPromtool = missingTool('promtool', 'prometheus');
if (noPromtool) console.warn(`skipping the promtool checks: ${noPromtool}`);

/** The exposed family a sample name belongs to (a histogram's _bucket, _sum and _count are its own). */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  const histogramBase = /^(.*)_(bucket|sum|count)$/.exec(name)?.[1];
  return families.get(name) ?? (histogramBase !== undefined && families.get(histogramBase)?.type === 'histogram' ? families.get(histogramBase) : undefined);
}

describe('deploy/grafana-dashboard.json', () => {
  let server: SvcProcess;
  let home: string;
  let families: Map<string, Family>;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'svc-dashboard-'));
    server = await startSvc({ args: [join(home, 'drive{1...4}')], env: { SVC_DRIVE_BACKEND: 'memfs', SVC_PROMETHEUS_AUTH_TYPE: 'public', SVC_CODING_THREADS: '0' } });
    const response = await fetch(`${server.url}/svc/metrics/cluster`);
    expect(response.status).toBe(200);
    families = parseExposition(await response.text());
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await rm(home, { recursive: true, force: true });
  });

  it('has the sections an operator looks for, and a query in every panel', () => {
    expect(panels.filter((panel) => panel.type === 'row').map((panel) => panel.title)).toEqual(['Cluster health', 'Capacity', 'Drives', 'Requests and latency', 'Healing', 'Operations', 'Nodes and internode RPC']);
    for (const panel of panels.filter((candidate) => candidate.type !== 'row')) expect(panel.targets?.length ?? 0, panel.title).toBeGreaterThan(0);
  });

  it('references only metric names the server exposes', () => {
    const referenced = new Set(expressions.flatMap((expr) => expr.match(/\bsvc_[a-zA-Z0-9_]+/g) ?? []));
    expect(referenced.size).toBeGreaterThan(30);
    expect([...referenced].filter((name) => familyOf(name, families) === undefined)).toEqual([]);
  });

  it.skipIf(noPromtool !== undefined)('every query is valid PromQL (promtool checks them as recording rules)', async () => {
    const rules = ['groups:', '  - name: dashboard', '    rules:', ...expressions.flatMap((expr, index) => [`      - record: svc_dashboard_query_${index}`, `        expr: ${JSON.stringify(asPromql(expr))}`])].join('\n');
    await writeFile(join(home, 'rules.yml'), `${rules}\n`);
    expect(execFileSync('promtool', ['check', 'rules', join(home, 'rules.yml')], { encoding: 'utf8' })).toContain(`SUCCESS: ${expressions.length} rules found`);
  });
});

describe.skipIf(noPromtool !== undefined)('deploy/prometheus.yml', () => {
  it('is a configuration Prometheus accepts, scraping the cluster view with a bearer token', async () => {
    const path = join(repoRoot, 'deploy/prometheus.yml');
    expect(execFileSync('promtool', ['check', 'config', path], { encoding: 'utf8' })).toContain('SUCCESS');
    const text = await readFile(path, 'utf8');
    expect(text).toMatch(/metrics_path: \/svc\/metrics\/cluster/);
    expect(text).toMatch(/bearer_token: /);
  });
});
