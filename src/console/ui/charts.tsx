/**
 * Metrics graphs: the last hour of requests, errors, latency percentiles, throughput, drive I/O and
 * heal activity, from the history each node keeps in memory (GET admin/v4/metrics/history, the
 * cluster's samples added up), polled every 10 s. Drawn as small inline SVG line charts (no
 * charting library: the whole console stays a few tens of KB): each is an image with a name and a
 * text summary (now, peak, average) that screen readers read and everyone sees under it; series
 * differ by dash as well as colour.
 */
import { api } from './api';
import { Card, ErrorNotice, usePoll } from './components';
import { bytes } from './format';
import type { MetricsHistory, MetricsSample } from '../../contracts/metrics-history';
import { latencyQuantileMs } from './latency';

export const historyIntervalMs = 10_000;
const hourMs = 3_600_000;

export function useMetricsHistory(scope: 'cluster' | 'node') {
  return usePoll(() => api<MetricsHistory>('GET', 'admin/v4/metrics/history', { query: { scope }, quietSignOut: true }), historyIntervalMs, [scope]);
}

interface Series {
  label: string;
  /** One value per sample (null where it cannot be computed). */
  values: (number | null)[];
}

const rate = (samples: MetricsSample[], intervalMs: number, pick: (sample: MetricsSample) => number) => samples.map((sample) => pick(sample) / (intervalMs / 1000));

function summary(series: Series, format: (value: number) => string): string {
  const values = series.values.filter((value): value is number => value !== null);
  if (values.length === 0) return `${series.label}: no data yet`;
  const now = values[values.length - 1]!;
  const peak = Math.max(...values);
  const average = values.reduce((sum, value) => sum + value, 0) / values.length;
  return `${series.label}: now ${format(now)}, peak ${format(peak)}, average ${format(average)}`;
}

const width = 600;
const height = 120;
const dashes = ['', '6 4', '2 3'];

/** One chart: the series over the last hour, the y axis from 0 to the largest value. */
export function LineChart(props: { id: string; title: string; times: number[]; endMs: number; series: Series[]; format: (value: number) => string }) {
  const { times, endMs, series, format } = props;
  const peak = Math.max(0, ...series.flatMap((line) => line.values.filter((value): value is number => value !== null)));
  const top = peak > 0 ? peak * 1.1 : 1;
  const x = (atMs: number) => ((atMs - (endMs - hourMs)) / hourMs) * width;
  const y = (value: number) => height - (value / top) * height;
  const paths = series.map((line) => {
    let path = '';
    let pen = false;
    line.values.forEach((value, index) => {
      if (value === null) {
        pen = false;
        return;
      }
      path += `${pen ? 'L' : 'M'}${x(times[index]!).toFixed(1)},${y(value).toFixed(1)} `;
      pen = true;
    });
    return path.trim();
  });
  const texts = series.map((line) => summary(line, format));
  return (
    <figure class="chart" data-testid={`chart-${props.id}`}>
      <figcaption class="chart-title">{props.title}</figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} preserveAspectRatio="none" role="img" aria-labelledby={`${props.id}-name ${props.id}-text`} class="chart-plot" focusable="false">
        <title id={`${props.id}-name`}>{`${props.title}, last hour`}</title>
        <line x1="0" y1={height - 0.5} x2={width} y2={height - 0.5} class="chart-axis" />
        <line x1="0" y1={y(peak)} x2={width} y2={y(peak)} class="chart-grid" />
        {paths.map((path, index) => (path ? <path key={series[index]!.label} d={path} class={`chart-line chart-line-${index}`} stroke-dasharray={dashes[index] || undefined} vector-effect="non-scaling-stroke" /> : null))}
      </svg>
      <div class="chart-scale muted small" aria-hidden="true">
        <span>1 h ago</span>
        <span>peak {format(peak)}</span>
        <span>now</span>
      </div>
      <ul class="chart-legend small" id={`${props.id}-text`}>
        {texts.map((text, index) => (
          <li key={series[index]!.label}>
            <span class={`chart-key chart-key-${index}`} aria-hidden="true" />
            {text}
          </li>
        ))}
      </ul>
    </figure>
  );
}

const perSecond = (value: number) => `${value < 10 ? value.toFixed(2) : value.toFixed(0)}/s`;
const milliseconds = (value: number) => (value < 1000 ? `${value.toFixed(value < 10 ? 1 : 0)} ms` : `${(value / 1000).toFixed(1)} s`);
const bytesPerSecond = (value: number) => `${bytes(value < 1024 ? Math.round(value) : value)}/s`;

/** The graphs of one scope, in a card. */
export function MetricsGraphs(props: { scope: 'cluster' | 'node'; title?: string }) {
  const { data, error } = useMetricsHistory(props.scope);
  const title = props.title ?? 'Last hour';
  if (!data) return <Card title={title}>{error ? <ErrorNotice error={error} /> : <p class="muted">Loading…</p>}</Card>;
  const { samples, intervalMs, latencyBoundsSeconds: bounds } = data;
  const times = samples.map((sample) => sample.atMs + intervalMs);
  const endMs = times.length > 0 ? Math.max(times[times.length - 1]!, Date.now()) : Date.now();
  const common = { times, endMs };
  const nodes = data.unreachable.length > 0 ? `${data.nodes.length} nodes answered; ${data.unreachable.join(', ')} did not` : `${data.nodes.length} ${data.nodes.length === 1 ? 'node' : 'nodes'}`;
  return (
    <Card title={title} class="charts-card">
      <p class="muted small">
        {samples.length === 0 ? 'The first sample comes within 10 s of start.' : `${samples.length} samples of ${intervalMs / 1000} s · ${nodes}`}
      </p>
      <div class="charts">
        <LineChart id={`${props.scope}-requests`} title="Requests" format={perSecond} {...common} series={[{ label: 'requests', values: rate(samples, intervalMs, (s) => s.requests) }, { label: '4xx', values: rate(samples, intervalMs, (s) => s.clientErrors) }, { label: '5xx', values: rate(samples, intervalMs, (s) => s.serverErrors) }]} />
        <LineChart id={`${props.scope}-latency`} title="Latency" format={milliseconds} {...common} series={[0.5, 0.9, 0.99].map((quantile) => ({ label: `p${Math.round(quantile * 100)}`, values: samples.map((sample) => latencyQuantileMs(sample, bounds, quantile)) }))} />
        <LineChart id={`${props.scope}-throughput`} title="Throughput" format={bytesPerSecond} {...common} series={[{ label: 'received', values: rate(samples, intervalMs, (s) => s.receivedBytes) }, { label: 'sent', values: rate(samples, intervalMs, (s) => s.sentBytes) }]} />
        <LineChart id={`${props.scope}-drives`} title="Drive I/O" format={perSecond} {...common} series={[{ label: 'operations', values: rate(samples, intervalMs, (s) => s.driveOperations) }, { label: 'errors', values: rate(samples, intervalMs, (s) => s.driveErrors) }]} />
        <LineChart id={`${props.scope}-heal`} title="Heal" format={perSecond} {...common} series={[{ label: 'objects scanned', values: rate(samples, intervalMs, (s) => s.healScannedObjects) }, { label: 'objects healed', values: rate(samples, intervalMs, (s) => s.healedObjects) }, { label: 'read repairs', values: rate(samples, intervalMs, (s) => s.readRepairs) }]} />
      </div>
    </Card>
  );
}
