/**
 * Operations: rebalance, decommission, heal, background heal with the read-repair queue, and
 * replacement recovery. Every call goes through the admin API's own routes; a refusal shows
 * the admin error's code and message. Statuses refresh by themselves.
 */
import { useState } from 'preact/hooks';
import { api } from './api';
import { Badge, Card, ConfirmDialog, Empty, ErrorNotice, GuardedButton, ProgressBar, usePoll, ActionsHead } from './components';
import { permissionReason, useDeploymentPermissions } from './permissions';
import { bytes, duration, percent, when } from './format';
import { healTokenKey, type BackgroundHeal, type DecommissionEntry, type HealSequence, type LifecycleStatus, type RebalanceStatus, type Snapshot } from './cluster-types';

const pollMs = 2000;

/** The read-repair queue's counters in words. */
const mrfLabels: Record<string, string> = {
  awaitingDrives: 'waiting for a drive to return:',
  processed: 'repaired:',
  failed: 'failed:',
  dropped: 'dropped (queue full):',
  retried: 'retried:',
  gaveUp: 'given up:',
  notQueued: 'not queued (read-repair off):',
};

interface Pending {
  title: string;
  body: string;
  label: string;
  run: () => Promise<unknown>;
}

export function OperationsPage() {
  const [pending, setPending] = useState<Pending | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const confirm = (action: Pending) => {
    setError(undefined);
    setPending(action);
  };
  const run = async () => {
    if (!pending) return;
    setBusy(true);
    try {
      await pending.run();
      setPending(undefined);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  const snapshot = usePoll(() => api<Snapshot>('GET', 'overview'), pollMs);
  return (
    <div class="page">
      <h1>Operations</h1>
      <ErrorNotice error={snapshot.error} />
      <Rebalance confirm={confirm} poolCount={snapshot.data?.pools.length} />
      <Decommission confirm={confirm} snapshot={snapshot.data} />
      <Heal />
      <BackgroundHealCard />
      <ReplacementRecovery />
      <Lifecycle />
      {pending ? (
        <ConfirmDialog title={pending.title} confirmLabel={pending.label} danger busy={busy} error={error} onConfirm={run} onCancel={() => setPending(undefined)}>
          <p>{pending.body}</p>
        </ConfirmDialog>
      ) : null}
    </div>
  );
}

function Rebalance(props: { confirm: (action: Pending) => void; poolCount: number | undefined }) {
  const { data, error } = usePoll(() => api<RebalanceStatus>('GET', 'admin/v3/rebalance/status'), pollMs);
  const running = data?.pools.some((pool) => pool.status === 'active' || pool.stopping) ?? false;
  const permissions = useDeploymentPermissions();
  return (
    <Card
      title="Rebalance"
      actions={
        running ? (
          <button class="button danger" type="button" onClick={() => props.confirm({ title: 'Stop the rebalance?', body: 'Objects already moved stay where they are; the rest stay put.', label: 'Stop rebalance', run: () => api('POST', 'admin/v3/rebalance/stop') })}>
            Stop
          </button>
        ) : (
          <GuardedButton
            id="rebalance-start"
            class="primary"
            reason={props.poolCount === 1 ? 'Rebalance needs more than one pool.' : permissionReason(permissions, 'rebalance')}
            extraDisabled={props.poolCount === undefined}
            onClick={() => props.confirm({ title: 'Start a rebalance?', body: 'Objects move from fuller pools to emptier ones until every pool is about as full as the whole deployment.', label: 'Start rebalance', run: () => api('POST', 'admin/v3/rebalance/start') })}
          >
            Start
          </GuardedButton>
        )
      }
    >
      <ErrorNotice error={error} />
      {data && data.id === null ? <Empty>No rebalance has run.{props.poolCount === 1 ? ' Rebalance needs more than one pool.' : ''}</Empty> : null}
      {data && data.id !== null ? (
        <>
          <p class="muted small">
            Run <span class="mono">{data.id}</span> · started {when(data.startedAt)} {data.stoppedAt ? `· stopped ${when(data.stoppedAt)}` : ''} · goal {((data.goalUsed ?? 0) * 100).toFixed(1)} % used
          </p>
          <ul class="ops">
            {data.pools.map((pool) => (
              <li key={pool.id}>
                <div class="op-head">
                  Pool {pool.id} <Badge state={pool.stopping ? 'stopping' : pool.status} />
                  <span class="muted small">
                    {pool.progress.objects} objects · {bytes(pool.progress.bytes)} of {bytes(pool.progress.bytesToMove)} · ETA {duration(pool.progress.etaMs)}
                  </span>
                </div>
                <ProgressBar value={pool.progress.bytesToMove > 0 ? percent(pool.progress.bytes, pool.progress.bytesToMove) : pool.status === 'completed' ? 100 : 0} label={`Rebalance of pool ${pool.id}`} />
                {pool.lastError ? <div class="field-error">{pool.lastError}</div> : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </Card>
  );
}

function Decommission(props: { confirm: (action: Pending) => void; snapshot: Snapshot | undefined }) {
  const [chosen, setChosen] = useState<Set<number>>(new Set());
  const pools = props.snapshot?.pools ?? [];
  const entries = props.snapshot?.operations.decommission ?? [];
  const entryOf = (pool: number): DecommissionEntry | undefined => entries.find((entry) => entry.pool === pool);
  const toggle = (pool: number) => {
    const next = new Set(chosen);
    if (next.has(pool)) next.delete(pool);
    else next.add(pool);
    setChosen(next);
  };
  const permissions = useDeploymentPermissions();
  const blocked =
    pools.length === 1
      ? 'Decommission needs another pool to move the objects to.'
      : chosen.size > 0 && chosen.size >= pools.length
        ? 'At least one pool must stay to take the objects.'
        : permissionReason(permissions, 'decommission');
  const start = () =>
    props.confirm({
      title: `Decommission pool(s) ${[...chosen].join(', ')}?`,
      body: 'The pools stop taking new objects and every object moves to the other pools. Remove a pool from the launch arguments only after its decommission completes.',
      label: 'Start decommission',
      run: async () => {
        await api('POST', 'admin/v3/pools/decommission', { query: { pool: [...chosen].join(','), 'by-id': 'true' } });
        setChosen(new Set());
      },
    });
  return (
    <Card
      title="Decommission"
      actions={
        <GuardedButton id="decommission-start" class="danger" reason={blocked} extraDisabled={chosen.size === 0} onClick={start}>
          Decommission selected
        </GuardedButton>
      }
    >
      <table class="table">
        <thead>
          <tr>
            <th class="check-col">
              <span class="sr-only">Select</span>
            </th>
            <th>Pool</th>
            <th>State</th>
            <th>Progress</th>
            <ActionsHead />
          </tr>
        </thead>
        <tbody>
          {pools.map((pool) => {
            const entry = entryOf(pool.id);
            return (
              <tr key={pool.id}>
                <td class="check-col">
                  <input type="checkbox" aria-label={`Select pool ${pool.id}`} checked={chosen.has(pool.id)} disabled={pools.length === 1} onChange={() => toggle(pool.id)} />
                </td>
                <td>
                  Pool {pool.id}
                  <div class="muted small mono break">{pool.cmdline}</div>
                </td>
                <td>{entry ? <Badge state={entry.state} /> : <span class="muted">in service</span>}</td>
                <td class="grow">
                  {entry ? (
                    <>
                      <ProgressBar value={entry.state === 'completed' ? 100 : percent(entry.progress.objects, entry.progress.totalObjects)} label={`Decommission of pool ${pool.id}`} />
                      <div class="muted small">
                        {entry.progress.objects} / {entry.progress.totalObjects} objects · {bytes(entry.progress.bytes)} · ETA {duration(entry.etaMs)}
                      </div>
                      {entry.reason ? <div class="field-error">{entry.reason}</div> : null}
                      {entry.unresolved.length > 0 ? (
                        <details>
                          <summary>{entry.unresolved.length} unresolved</summary>
                          <ul class="key-list">
                            {entry.unresolved.slice(0, 50).map((key) => (
                              <li key={key}>{key}</li>
                            ))}
                          </ul>
                        </details>
                      ) : null}
                    </>
                  ) : null}
                </td>
                <td class="actions-col">
                  {entry && (entry.state === 'active' || entry.state === 'queued') ? (
                    <button class="button small" type="button" onClick={() => props.confirm({ title: `Cancel the decommission of pool ${pool.id}?`, body: 'Objects already moved stay moved; the pool takes writes again once cleared.', label: 'Cancel decommission', run: () => api('POST', 'admin/v3/pools/cancel', { query: { pool: String(pool.id), 'by-id': 'true' } }) })}>
                      Cancel
                    </button>
                  ) : null}
                  {entry && (entry.state === 'failed' || entry.state === 'canceled') ? (
                    <button class="button small" type="button" onClick={() => props.confirm({ title: `Clear the decommission of pool ${pool.id}?`, body: 'The entry is removed; no data moves back.', label: 'Clear', run: () => api('POST', 'admin/v3/pools/clear', { query: { pool: String(pool.id), 'by-id': 'true' } }) })}>
                      Clear
                    </button>
                  ) : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </Card>
  );
}

/** The lifecycle scanner of the node serving the console: one line for the running or last cycle. */
function Lifecycle() {
  const { data, error, reload } = usePoll(() => api<LifecycleStatus>('GET', 'admin/v4/lifecycle/status'), pollMs);
  const [runError, setRunError] = useState<unknown>(undefined);
  const cycle = data?.current ?? data?.last;
  const runNow = async () => {
    setRunError(undefined);
    try {
      await api('POST', 'admin/v4/lifecycle/run');
      reload();
    } catch (caught) {
      setRunError(caught);
    }
  };
  return (
    <Card title="Lifecycle expiry" actions={<button class="button" type="button" disabled={data?.running ?? true} onClick={() => void runNow()}>Run now</button>}>
      <ErrorNotice error={error ?? runError} />
      {data && !cycle ? <Empty>No lifecycle cycle has run on this node yet{data.nextCycleAt ? `; the next starts ${when(data.nextCycleAt)}` : ''}.</Empty> : null}
      {data && cycle ? (
        <p class="lifecycle-line">
          <Badge state={data.running ? 'running' : cycle.errors > 0 ? 'error' : 'finished'} /> {data.running ? 'Started' : 'Last cycle'} {when(cycle.startedAt)} ({cycle.trigger}) · {cycle.bucketsScanned} buckets{cycle.bucketsSkipped > 0 ? ` (${cycle.bucketsSkipped} left to the node holding their scan lock)` : ''} · {cycle.objectsScanned} objects scanned · expired {cycle.expired.currentVersions} objects, {cycle.expired.noncurrentVersions} noncurrent versions, {cycle.expired.deleteMarkers} delete markers, {cycle.expired.multipartUploads} uploads · {cycle.lockedVersionsKept} locked kept · {cycle.errors} errors
          {!data.running && data.nextCycleAt ? <span class="muted small"> · next {when(data.nextCycleAt)}</span> : null}
        </p>
      ) : null}
    </Card>
  );
}

function healPath(bucket: string, prefix: string): string {
  const parts = ['admin/v3/heal/'];
  if (bucket) parts.push(encodeURIComponent(bucket));
  if (bucket && prefix) parts.push(`/${prefix.split('/').map(encodeURIComponent).join('/')}`);
  return parts.join('');
}

function Heal() {
  const [bucket, setBucket] = useState('');
  const [prefix, setPrefix] = useState('');
  const [scanMode, setScanMode] = useState('normal');
  const [dryRun, setDryRun] = useState(false);
  const [remove, setRemove] = useState(false);
  const [token, setToken] = useState<string | undefined>(() => sessionStorage.getItem(healTokenKey) ?? undefined);
  const [error, setError] = useState<unknown>(undefined);
  const status = usePoll(() => (token ? api<HealSequence>('POST', 'admin/v3/heal/', { query: { clientToken: token } }) : Promise.resolve(undefined)), pollMs, [token]);
  const start = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      const answer = await api<HealSequence>('POST', healPath(bucket, prefix), { body: { recursive: true, dryRun, remove, scanMode } });
      sessionStorage.setItem(healTokenKey, answer.clientToken);
      setToken(answer.clientToken);
    } catch (caught) {
      setError(caught);
    }
  };
  const stop = async () => {
    if (token) await api('POST', 'admin/v3/heal/', { query: { clientToken: token, forceStop: 'true' } }).catch(setError);
  };
  const heal = status.data;
  return (
    <Card title="Heal">
      <form class="heal-form" onSubmit={start} aria-label="Start a heal">
        <label class="field compact">
          <span>Bucket (empty: everything)</span>
          <input name="healBucket" value={bucket} onInput={(event) => setBucket((event.target as HTMLInputElement).value)} spellcheck={false} />
        </label>
        <label class="field compact">
          <span>Prefix</span>
          <input name="healPrefix" value={prefix} disabled={bucket === ''} onInput={(event) => setPrefix((event.target as HTMLInputElement).value)} spellcheck={false} />
        </label>
        <label class="field compact">
          <span>Scan mode</span>
          <select value={scanMode} onChange={(event) => setScanMode((event.target as HTMLSelectElement).value)}>
            <option value="normal">normal (metadata and shard presence)</option>
            <option value="deep">deep (read and verify every shard)</option>
          </select>
        </label>
        <label class="check">
          <input type="checkbox" checked={dryRun} onChange={() => setDryRun(!dryRun)} /> Dry run
        </label>
        <label class="check">
          <input type="checkbox" checked={remove} onChange={() => setRemove(!remove)} /> Remove dangling objects
        </label>
        <button class="button primary" type="submit">
          Start heal
        </button>
      </form>
      <ErrorNotice error={error ?? status.error} />
      {heal ? (
        <div class="heal-status" data-status={heal.status}>
          <div class="op-head">
            Heal of <span class="mono">{heal.path.bucket ? `${heal.path.bucket}${heal.path.prefix ? `/${heal.path.prefix}` : ''}` : 'everything'}</span> <Badge state={heal.status} />
            <span class="muted small">
              started {when(heal.startedAt)}
              {heal.finishedAt ? ` · finished ${when(heal.finishedAt)}` : ''}
            </span>
            {heal.status === 'running' ? (
              <button class="button small danger" type="button" onClick={stop}>
                Stop
              </button>
            ) : null}
          </div>
          <p class="small">
            {heal.counts.objectsScanned} scanned · {heal.counts.objectsHealed} healed · {heal.counts.shardsHealed} shards rebuilt · {heal.counts.objectsUnrecoverable} unrecoverable · {heal.counts.failures} failures
          </p>
          {heal.lastError ? <div class="field-error">{heal.lastError}</div> : null}
          {heal.items.length > 0 ? (
            <table class="table small">
              <thead>
                <tr>
                  <th>Item</th>
                  <th>Outcome</th>
                  <th class="hide-narrow">Drives before → after</th>
                </tr>
              </thead>
              <tbody>
                {heal.items.slice(-50).map((item, index) => (
                  <tr key={index}>
                    <td class="break">
                      {item.type} {item.bucket ?? ''}
                      {item.object ? `/${item.object}` : ''} <span class="muted">(pool {item.pool}, set {item.set})</span>
                    </td>
                    <td>
                      <Badge state={item.outcome} />
                      {item.reason ? <div class="muted small">{item.reason}</div> : null}
                    </td>
                    <td class="hide-narrow">
                      {(item.before ?? []).map((drive, at) => (
                        <div key={drive.endpoint} class="small mono break">
                          {drive.endpoint}: {drive.state} → {item.after?.[at]?.state ?? '–'}
                        </div>
                      ))}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
        </div>
      ) : null}
    </Card>
  );
}

function BackgroundHealCard() {
  const { data, error } = usePoll(() => api<BackgroundHeal>('POST', 'admin/v3/background-heal/status'), pollMs);
  return (
    <Card title="Background heal and read-repair">
      <ErrorNotice error={error} />
      {data ? (
        <>
          <p>
            Read-repair queue: <strong>{data.mrf.queued}</strong> waiting (limit {data.mrf.limit})
            {Object.entries(data.mrf)
              .filter(([name]) => name !== 'queued' && name !== 'limit')
              .map(([name, value]) => ` · ${mrfLabels[name] ?? name} ${value}`)
              .join('')}
          </p>
          {data.background.length === 0 ? <p class="muted">No background heal has run since start.</p> : null}
          <ul class="ops">
            {data.background.map((task) => (
              <li key={task.task}>
                <div class="op-head">
                  Pool {task.pool ?? '–'} set {task.set ?? '–'} <Badge state={task.status} />
                </div>
                <span class="muted small">
                  {task.counts.objectsScanned} scanned · {task.counts.objectsHealed} healed · {task.counts.failures} failures
                </span>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </Card>
  );
}

function ReplacementRecovery() {
  const { data, error } = usePoll(() => api<{ instances: { pool: number; set: number; slot: number; endpoint: string; driveId: string; detectedAt: string; startedAt?: string; finishedAt?: string; objectsHealed: number; objectsFailed: number; completed: boolean }[] }>('GET', 'admin/v4/heal/replacement-recovery'), pollMs * 2);
  return (
    <Card title="Drive replacement recovery">
      <ErrorNotice error={error} />
      {data && data.instances.length === 0 ? <Empty>No replaced drive recorded.</Empty> : null}
      {data && data.instances.length > 0 ? (
        <table class="table">
          <thead>
            <tr>
              <th>Drive</th>
              <th>Detected</th>
              <th>Objects</th>
              <th>Completed</th>
            </tr>
          </thead>
          <tbody>
            {data.instances.map((record) => (
              <tr key={`${record.pool}-${record.set}-${record.slot}`}>
                <td>
                  <span class="mono break">{record.endpoint}</span>
                  <div class="muted small">
                    pool {record.pool} · set {record.set} · slot {record.slot}
                  </div>
                </td>
                <td>{when(record.detectedAt)}</td>
                <td>
                  {record.objectsHealed} healed · {record.objectsFailed} failed
                </td>
                <td>
                  <Badge state={record.completed ? 'complete' : record.startedAt ? 'healing' : 'waiting'} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Card>
  );
}
