/**
 * Explorer: where one object's shards are, and what failing drives or nodes would do to it. The
 * placement and the verdicts are the server's (the admin placement and failure what-if calls);
 * this page only draws them. Below, the layout planner answers for launch patterns as `svc plan`.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from './api';
import { Badge, Card, ErrorNotice, usePoll } from './components';
import { bytes } from './format';

interface Drive {
  endpoint: string;
  node: string;
  state: 'online' | 'offline';
}
interface Shard {
  index: number;
  role: 'data' | 'parity';
  slot: number;
  drive: Drive;
  status?: string;
}
interface Rule {
  needed: number;
  formula: string;
  worked: string;
}
type Quorums = Record<'read' | 'write' | 'delete', Rule>;
interface Fate {
  readable: boolean;
  writable: boolean;
  deletable: boolean;
  moreFailuresTolerated: { read: number; write: number; delete: number };
}
interface Placement {
  bucket: string;
  key: string;
  pool: number;
  set: number;
  version: { versionId: string; sizeBytes: number; storageClass: string };
  geometry: { setDriveCount: number; dataShards: number; parityShards: number };
  shards: Shard[];
}
interface ClassFate extends Fate {
  storageClass: string;
  dataShards: number;
  parityShards: number;
  quorums: Quorums;
}
interface SetFate {
  pool: number;
  set: number;
  setDriveCount: number;
  failedSlots: number[];
  classes: ClassFate[];
}
interface Simulation {
  sets: SetFate[];
  summary: { readable: boolean; writable: boolean; deletable: boolean };
}

export function explorerHash(bucket: string, key: string): string {
  return `#/explorer/${encodeURIComponent(bucket)}/${encodeURIComponent(key)}`;
}

export function ExplorerPage(props: { bucket: string; objectKey: string }) {
  return (
    <div class="page">
      <h1>Explorer</h1>
      <p class="muted">Where an object's erasure shards are, and what failed drives would do to it. Marking a drive failed changes nothing on the server.</p>
      <ObjectPicker bucket={props.bucket} objectKey={props.objectKey} />
      {props.bucket !== '' && props.objectKey !== '' ? <ObjectPlacement key={`${props.bucket}/${props.objectKey}`} bucket={props.bucket} objectKey={props.objectKey} /> : null}
      <Planner />
    </div>
  );
}

function ObjectPicker(props: { bucket: string; objectKey: string }) {
  const [bucket, setBucket] = useState(props.bucket);
  const [key, setKey] = useState(props.objectKey);
  const submit = (event: Event) => {
    event.preventDefault();
    location.hash = explorerHash(bucket.trim(), key);
  };
  return (
    <Card title="Object">
      <form class="inline-form" onSubmit={submit} aria-label="Pick an object">
        <label class="field grow">
          <span>Bucket</span>
          <input value={bucket} onInput={(event) => setBucket((event.target as HTMLInputElement).value)} required />
        </label>
        <label class="field grow">
          <span>Key</span>
          <input value={key} onInput={(event) => setKey((event.target as HTMLInputElement).value)} required />
        </label>
        <button class="button primary" type="submit">
          Show placement
        </button>
      </form>
    </Card>
  );
}

function toggled(list: string[], item: string): string[] {
  return list.includes(item) ? list.filter((entry) => entry !== item) : [...list, item];
}

function ObjectPlacement(props: { bucket: string; objectKey: string }) {
  const { data: placement, error } = usePoll(() => api<Placement>('GET', 'admin/v4/object/placement', { query: { bucket: props.bucket, key: props.objectKey } }), 0);
  const [drives, setDrives] = useState<string[]>([]);
  const [nodes, setNodes] = useState<string[]>([]);
  const [simulation, setSimulation] = useState<Simulation | undefined>(undefined);
  const [simulateError, setSimulateError] = useState<unknown>(undefined);
  useEffect(() => {
    let current = true;
    api<Simulation>('POST', 'admin/v4/simulate/failure', { body: { drives, nodes } }).then(
      (answer) => current && (setSimulation(answer), setSimulateError(undefined)),
      (caught) => current && setSimulateError(caught),
    );
    return () => {
      current = false;
    };
  }, [drives.join('\n'), nodes.join('\n')]);
  if (!placement) return <ErrorNotice error={error} />;
  const setFate = simulation?.sets.find((set) => set.pool === placement.pool && set.set === placement.set);
  const { dataShards, parityShards } = placement.geometry;
  const objectFate = setFate?.classes.find((entry) => entry.dataShards === dataShards && entry.parityShards === parityShards);
  const failedSlots = new Set(setFate?.failedSlots ?? []);
  const bySlot = [...placement.shards].sort((a, b) => a.slot - b.slot);
  const nodeNames = [...new Set(bySlot.map((shard) => shard.drive.node))];
  return (
    <>
      <Card title={`${placement.key} in pool ${placement.pool}, set ${placement.set}`} actions={<span class="muted small">{bytes(placement.version.sizeBytes)} · {placement.version.storageClass} · EC {dataShards}+{parityShards}</span>}>
        <ErrorNotice error={simulateError} />
        <p class="muted small">Press a drive or a node to mark it failed; press again to bring it back.</p>
        <div class="node-row" role="group" aria-label="Nodes">
          {nodeNames.map((node) => (
            <button key={node} type="button" class="button small" aria-pressed={nodes.includes(node)} onClick={() => setNodes(toggled(nodes, node))}>
              {nodes.includes(node) ? 'Restore' : 'Fail'} node {node}
            </button>
          ))}
          {drives.length + nodes.length > 0 ? (
            <button type="button" class="button small" onClick={() => (setDrives([]), setNodes([]))}>
              Clear failures
            </button>
          ) : null}
        </div>
        <div class="shard-grid" role="group" aria-label={`Drives of set ${placement.set}`}>
          {bySlot.map((shard) => {
            const failed = failedSlots.has(shard.slot);
            const state = failed ? (shard.drive.state === 'offline' ? 'offline' : 'failed') : 'online';
            return (
              <button
                key={shard.slot}
                type="button"
                class={`shard ${shard.status === 'missing' ? 'none' : shard.role} ${state}`}
                data-endpoint={shard.drive.endpoint}
                data-state={state}
                aria-pressed={drives.includes(shard.drive.endpoint)}
                onClick={() => setDrives(toggled(drives, shard.drive.endpoint))}
              >
                <span class="shard-role">{shard.status === 'missing' ? 'no shard' : `${shard.role} ${shard.index}`}</span>
                <span class="mono small break">{shard.drive.endpoint}</span>
                <span class="small">
                  slot {shard.slot} <Badge state={state} />
                </span>
              </button>
            );
          })}
        </div>
        <p class="legend small muted">
          <span class="swatch data" /> data <span class="swatch parity" /> parity <span class="swatch none" /> no shard <span class="swatch failed" /> failed
        </p>
      </Card>
      {objectFate && setFate ? <FateCard title="Fate of the object" fate={objectFate} failed={setFate.failedSlots.length} setDriveCount={setFate.setDriveCount} /> : null}
      {simulation ? <SetsCard simulation={simulation} /> : null}
    </>
  );
}

const verdicts = [
  ['read', 'readable'],
  ['write', 'writable'],
  ['delete', 'deletable'],
] as const;

function FateCard(props: { title: string; fate: ClassFate; failed: number; setDriveCount: number }) {
  const { fate } = props;
  return (
    <Card title={props.title} actions={<span class="muted small">{props.failed} of {props.setDriveCount} drives failed</span>}>
      <div class="fate" data-testid="object-fate">
        {verdicts.map(([operation, verdict]) => (
          <div key={operation} class="fate-row" data-verdict={verdict} data-value={String(fate[verdict])}>
            <Badge state={fate[verdict] ? verdict : `not ${verdict}`} />
            <span class="small">
              {fate.moreFailuresTolerated[operation] >= 0 ? `${fate.moreFailuresTolerated[operation]} more failure(s) tolerated` : 'quorum lost'}
            </span>
            <span class="small muted mono">
              {operation} quorum {fate.quorums[operation].formula}; {fate.quorums[operation].worked}
            </span>
          </div>
        ))}
      </div>
    </Card>
  );
}

function SetsCard(props: { simulation: Simulation }) {
  return (
    <Card title="Every set, every storage class" scrollable actions={<span class="muted small">all readable: {props.simulation.summary.readable ? 'yes' : 'no'}</span>}>
      <table class="table">
        <thead>
          <tr>
            <th>Set</th>
            <th>Class</th>
            <th class="num">Failed</th>
            <th>Read</th>
            <th>Write</th>
            <th>Delete</th>
          </tr>
        </thead>
        <tbody>
          {props.simulation.sets.flatMap((set) =>
            set.classes.map((entry) => (
              <tr key={`${set.pool}/${set.set}/${entry.storageClass}`}>
                <td class="nowrap">
                  pool {set.pool}, set {set.set}
                </td>
                <td>
                  {entry.storageClass} <span class="muted nowrap">EC {entry.dataShards}+{entry.parityShards}</span>
                </td>
                <td class="num">
                  {set.failedSlots.length}/{set.setDriveCount}
                </td>
                {verdicts.map(([operation, verdict]) => (
                  <td key={operation} class="nowrap">
                    {entry[verdict] ? `ok, ${entry.moreFailuresTolerated[operation]} spare` : 'lost'}
                  </td>
                ))}
              </tr>
            )),
          )}
        </tbody>
      </table>
    </Card>
  );
}

interface PlanClass {
  storageClass: string;
  parity: number;
  dataShards: number;
  usableFraction: number;
  usableBytes?: number;
  tolerates: { readDrives: number; writeDrives: number; readHosts: number };
}
type Plan =
  | { accepted: true; pools: { index: number; pattern: string; drives: number; setDriveCount: number; setCount: number; hosts: number; classes: PlanClass[] }[]; usableBytes?: number; warnings: { message: string }[] }
  | { accepted: false; rejection: { code: string; rule?: string; message: string } };

function Planner() {
  const [patterns, setPatterns] = useState('');
  const [driveSize, setDriveSize] = useState('');
  const [plan, setPlan] = useState<Plan | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      setPlan(await api<Plan>('POST', 'plan', { body: { patterns: patterns.split(/\s+/).filter((part) => part !== ''), driveSize } }));
    } catch (caught) {
      setPlan(undefined);
      setError(caught);
    }
  };
  return (
    <Card title="Layout planner">
      <p class="muted small">What <span class="mono">svc server</span> would do with these launch patterns in this server's environment (same as <span class="mono">svc plan</span>). Nothing is started.</p>
      <form class="inline-form" onSubmit={submit} aria-label="Plan a layout">
        <label class="field grow">
          <span>Launch patterns (space separated)</span>
          <input class="mono" value={patterns} placeholder="http://node{1...4}:9000/data{1...4}" onInput={(event) => setPatterns((event.target as HTMLInputElement).value)} required />
        </label>
        <label class="field">
          <span>Drive size (optional)</span>
          <input value={driveSize} placeholder="8TiB" size={8} onInput={(event) => setDriveSize((event.target as HTMLInputElement).value)} />
        </label>
        <button class="button primary" type="submit">
          Plan
        </button>
      </form>
      <ErrorNotice error={error} />
      {plan ? <PlanAnswer plan={plan} /> : null}
    </Card>
  );
}

function PlanAnswer(props: { plan: Plan }) {
  const { plan } = props;
  if (!plan.accepted) {
    return (
      <div class="plan-rejection" role="status" data-testid="plan-answer" data-accepted="false">
        <Badge state="rejected" /> <span class="mono small">{plan.rejection.code}</span>
        {plan.rejection.rule ? <span class="small"> rule: <span class="mono">{plan.rejection.rule}</span></span> : null}
        <p class="break">{plan.rejection.message}</p>
      </div>
    );
  }
  return (
    <div role="status" data-testid="plan-answer" data-accepted="true">
      <p>
        <Badge state="accepted" /> {plan.pools.length} pool(s){plan.usableBytes !== undefined ? ` · ${bytes(plan.usableBytes)} usable for STANDARD objects` : ''}
      </p>
      {plan.pools.map((pool) => (
        <div key={pool.index} class="plan-pool">
          <div class="mono small break">{pool.pattern}</div>
          <div class="small">
            {pool.drives} drive(s) on {pool.hosts} host(s): {pool.setCount} set(s) of {pool.setDriveCount}
          </div>
          <ul class="small">
            {pool.classes.map((entry) => (
              <li key={entry.storageClass}>
                {entry.storageClass} EC:{entry.parity} (K={entry.dataShards}, M={entry.parity}): {(entry.usableFraction * 100).toFixed(1)}% usable; per set {entry.tolerates.readDrives} drive(s) may fail for reads, {entry.tolerates.writeDrives} for writes, {entry.tolerates.readHosts} host(s)
              </li>
            ))}
          </ul>
        </div>
      ))}
      {plan.warnings.map((warning) => (
        <p key={warning.message} class="small warn-text">
          {warning.message}
        </p>
      ))}
    </div>
  );
}
