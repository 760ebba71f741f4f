/** Overview: the deployment at a glance, and any operation running, updated every few seconds. */
import { api } from './api';
import { Badge, Card, ErrorNotice, ProgressBar, Stat, usePoll } from './components';
import { bytes, duration, percent } from './format';
import { useHealth } from './health';
import { UsageStats } from './usage';
import { MetricsGraphs } from './charts';
import { driveState, healTokenKey, type Capabilities, type HealSequence, type Snapshot } from './cluster-types';

export const snapshotIntervalMs = 3000;

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

export function OverviewPage() {
  const snapshot = usePoll(() => api<Snapshot>('GET', 'overview'), snapshotIntervalMs);
  const healToken = sessionStorage.getItem(healTokenKey) ?? undefined;
  const heal = usePoll(() => (healToken ? api<HealSequence>('POST', 'admin/v3/heal/', { query: { clientToken: healToken }, quietSignOut: true }) : Promise.resolve(undefined)), snapshotIntervalMs);
  const capabilities = usePoll(() => api<Capabilities>('GET', 'admin/v4/runtime/capabilities'), 0);
  const health = useHealth();
  const data = snapshot.data;
  if (!data) return <div class="page"><h1>Overview</h1><ErrorNotice error={snapshot.error} />{snapshot.error ? null : <p class="muted">Loading…</p>}</div>;
  const healing = data.operations.heal.healingDrives;
  const drives = data.pools.flatMap((pool) => pool.sets.flatMap((set) => set.drives.map((slot) => driveState(slot, pool.id, healing))));
  const count = (state: string) => drives.filter((value) => value === state).length;
  const raw = data.pools.reduce((sum, pool) => sum + pool.totalBytes, 0);
  const used = data.pools.reduce((sum, pool) => sum + pool.usedBytes, 0);
  const usable = data.pools.reduce((sum, pool) => {
    const parity = Number(capabilities.data?.storageClasses.find((entry) => entry.pool === pool.id)?.STANDARD.replace('EC:', '') ?? NaN);
    return sum + (Number.isFinite(parity) ? (pool.totalBytes * (pool.drivesPerSet - parity)) / pool.drivesPerSet : NaN);
  }, 0);
  const nodesOnline = data.nodes.filter((node) => node.state === 'online').length;
  const drivesDown = count('offline') + count('healing');
  const tone = health?.status === 'critical' ? 'bad' : drivesDown > 0 || health?.status === 'degraded' ? 'warn' : undefined;
  const nodesWithDrivesDown = data.nodes.filter((node) => node.state === 'online' && node.drivesOnline < node.drives).length;
  const nodesHint = nodesOnline < data.nodes.length ? `${data.nodes.length - nodesOnline} offline` : nodesWithDrivesDown > 0 ? `all online; ${nodesWithDrivesDown} with a drive offline` : 'all online, every drive answering';
  return (
    <div class="page">
      <h1>Overview</h1>
      <ErrorNotice error={snapshot.error} />
      <div class="stats">
        <Stat label="Nodes" value={`${nodesOnline} / ${data.nodes.length}`} hint={nodesHint} tone={nodesOnline < data.nodes.length ? 'bad' : nodesWithDrivesDown > 0 ? 'warn' : undefined} />
        <Stat label="Pools" value={data.pools.length} hint={plural(data.pools.reduce((sum, pool) => sum + pool.setCount, 0), 'erasure set')} />
        <Stat label="Drives online" value={`${count('online')} / ${drives.length}`} hint={`${count('offline')} offline · ${count('healing')} healing`} tone={tone} />
        <Stat label="Raw capacity" value={bytes(raw)} hint={count('offline') > 0 ? `${bytes(used)} used; ${plural(count('offline'), 'offline drive')} not counted` : `${bytes(used)} used`} tone={count('offline') > 0 ? 'warn' : undefined} />
        <Stat label="Usable capacity" value={Number.isFinite(usable) ? bytes(usable) : '–'} hint="raw × K / N (STANDARD parity)" />
        <UsageStats />
      </div>
      <Card title="Capacity">
        <ProgressBar value={percent(used, raw)} label="Raw capacity used" tone={used / raw > 0.85 ? 'warn' : undefined} />
        <p class="muted small">
          {bytes(used)} of {bytes(raw)} raw used ({percent(used, raw).toFixed(1)} %)
        </p>
      </Card>
      <MetricsGraphs scope="cluster" title="Last hour (every node)" />
      <Card title="Running operations">
        <RunningOperations snapshot={data} heal={heal.data} />
      </Card>
      <Card title="Deployment">
        <dl class="facts">
          <dt>Deployment id</dt>
          <dd class="mono break">{data.deploymentId}</dd>
          <dt>This node</dt>
          <dd class="mono">{data.thisNode}</dd>
          <dt>Version</dt>
          <dd>{capabilities.data?.version ?? '–'}</dd>
          <dt>Updated</dt>
          <dd>{new Date(data.generatedAt).toLocaleTimeString()}</dd>
        </dl>
      </Card>
    </div>
  );
}

function RunningOperations(props: { snapshot: Snapshot; heal: HealSequence | undefined }) {
  const { rebalance, decommission, heal } = props.snapshot.operations;
  const rows = [];
  if (props.heal?.status === 'running') {
    const counts = props.heal.counts;
    rows.push(
      <li key="heal">
        <div class="op-head">
          Heal of <span class="mono">{props.heal.path.bucket ?? 'everything'}</span> <Badge state="running" />
        </div>
        <span class="muted small">
          {counts.objectsScanned} scanned · {counts.objectsHealed} healed · {counts.failures} failures
        </span>
      </li>,
    );
  }
  for (const pool of rebalance.pools.filter((entry) => entry.status === 'active' || entry.stopping)) {
    rows.push(
      <li key={`r${pool.id}`}>
        <div class="op-head">
          Rebalance · pool {pool.id} <Badge state={pool.stopping ? 'stopping' : pool.status} />
          <span class="muted small">ETA {duration(pool.progress.etaMs)}</span>
        </div>
        <ProgressBar value={percent(pool.progress.bytes, pool.progress.bytesToMove)} label={`Rebalance of pool ${pool.id}`} />
      </li>,
    );
  }
  for (const entry of decommission.filter((item) => item.state === 'active' || item.state === 'queued')) {
    rows.push(
      <li key={`d${entry.pool}`}>
        <div class="op-head">
          Decommission · pool {entry.pool} <Badge state={entry.state} />
          <span class="muted small">ETA {duration(entry.etaMs)}</span>
        </div>
        <ProgressBar value={percent(entry.progress.objects, entry.progress.totalObjects)} label={`Decommission of pool ${entry.pool}`} />
      </li>,
    );
  }
  for (const task of heal.background.filter((item) => item.status === 'running')) {
    rows.push(
      <li key={`h${task.task}`}>
        <div class="op-head">
          Heal · pool {task.pool ?? '–'} set {task.set ?? '–'} <Badge state={task.status} />
        </div>
        <span class="muted small">
          {task.counts.objectsScanned} scanned · {task.counts.objectsHealed} healed · {task.counts.failures} failures
        </span>
      </li>,
    );
  }
  for (const drive of heal.healingDrives.filter((item) => item.state !== 'healed')) {
    rows.push(
      <li key={`dr${drive.endpoint}`}>
        <div class="op-head">
          Drive replacement · <span class="mono">{drive.endpoint}</span> <Badge state={drive.state} />
        </div>
        <span class="muted small">{drive.objectsHealed} objects healed · {drive.objectsFailed} failed</span>
      </li>,
    );
  }
  if (heal.mrf.queued > 0) rows.push(<li key="mrf">Read-repair queue: {heal.mrf.queued} object(s) waiting</li>);
  return rows.length > 0 ? <ul class="ops">{rows}</ul> : <p class="muted">Nothing running: no rebalance, decommission or heal.</p>;
}
