/**
 * `rc admin prometheus generate <alias> [cluster|node]`: a bearer token for the metrics endpoints
 * and a scrape configuration to paste into prometheus.yml. The token is signed here with the
 * key every node derives from the root credentials, so it needs no server round trip and any
 * node accepts it.
 */
import { createMetricsToken, metricsKeyFor } from '../../util/metrics-token.js';
import { limits } from '../../util/limits.js';
import { RcError, type Alias, type RcContext } from './context.js';

export interface ScrapeConfig {
  jobName: string;
  bearerToken: string;
  metricsPath: string;
  scheme: string;
  target: string;
}

export function scrapeConfigFor(alias: Alias, view: 'cluster' | 'node', nowMs: number): ScrapeConfig {
  const url = new URL(alias.url);
  return {
    jobName: `svc-${view}`,
    bearerToken: createMetricsToken(metricsKeyFor(alias.accessKey, alias.secretKey), alias.accessKey, nowMs, limits.metricsTokenTtlMs),
    metricsPath: `/svc/metrics/${view}`,
    scheme: url.protocol.replace(':', ''),
    target: url.host,
  };
}

export function scrapeConfigYaml(config: ScrapeConfig): string {
  return [
    'scrape_configs:',
    `  - job_name: ${config.jobName}`,
    `    bearer_token: ${config.bearerToken}`,
    `    metrics_path: ${config.metricsPath}`,
    `    scheme: ${config.scheme}`,
    '    static_configs:',
    `      - targets: ['${config.target}']`,
    '',
  ].join('\n');
}

export async function prometheusGenerate(context: RcContext, aliasName: string, view: string | undefined): Promise<void> {
  if (view !== undefined && view !== 'cluster' && view !== 'node') throw new RcError(`the metrics view is 'cluster' or 'node', not '${view}'`, 2);
  const config = scrapeConfigFor(await context.alias(aliasName), view ?? 'cluster', Date.now());
  context.print(config, () => scrapeConfigYaml(config).trimEnd());
}
