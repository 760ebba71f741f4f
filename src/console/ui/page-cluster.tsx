/** Cluster: nodes, then pools → erasure sets → drives, updated every few seconds. */
import { api } from './api';
import { Badge, Card, ErrorNotice, ProgressBar, usePoll } from './components';
import { bytes, percent } from './format';
import { driveState, type Snapshot } from './cluster-types';
import { snapshotIntervalMs } from './page-overview';
import { MetricsGraphs } from './charts';

export function ClusterPage() {
  const { data, error } = usePoll(() => api<Snapshot>('GET', 'overview'), snapshotIntervalMs);
  return (
    <div class="page">
      <h1>Cluster</h1>
      <ErrorNotice error={error} />
      {data ? (
        <>
          <Card title={`Nodes (${data.nodes.length})`} scrollable>
            <table class="table nodes-table" aria-label="Nodes">
              <thead>
                <tr>
                  <th>Node</th>
                  <th>State</th>
                  <th class="num">Drives online</th>
                </tr>
              </thead>
              <tbody>
                {data.nodes.map((node) => (
                  <tr key={node.endpoint}>
                    <td class="mono break">{node.endpoint === 'local' ? `${data.thisNode} (local drives)` : node.endpoint}</td>
                    <td>
                      <Badge state={node.state} />
                    </td>
                    <td class="num">
                      {node.drivesOnline} / {node.drives}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Card>
          <MetricsGraphs scope="cluster" title="Last hour (every node, added up)" />
          <MetricsGraphs scope="node" title={`Last hour (${data.thisNode})`} />
          {data.pools.map((pool) => (
            <Card key={pool.id} title={`Pool ${pool.id}`} actions={<span class="muted small mono break">{pool.cmdline}</span>}>
              <p class="muted small">
                {pool.setCount} set(s) of {pool.drivesPerSet} drives · {bytes(pool.usedBytes)} of {bytes(pool.totalBytes)} used
                {pool.decommission ? (
                  <>
                    {' '}
                    · decommission <Badge state={pool.decommission.state} />
                  </>
                ) : null}
              </p>
              {pool.sets.map((set) => (
                <div key={set.set} class="set">
                  <h3>Set {set.set}</h3>
                  <div class="drives">
                    {set.drives.map((slot) => {
                      const state = driveState(slot, pool.id, data.operations.heal.healingDrives);
                      const heal = data.operations.heal.healingDrives.find((drive) => drive.pool === pool.id && drive.set === slot.set && drive.slot === slot.slot);
                      return (
                        <div key={slot.slot} class={`drive ${state}`} data-endpoint={slot.endpoint} data-state={state}>
                          <div class="drive-head">
                            <span class="mono break">{slot.endpoint}</span>
                            <Badge state={state} />
                          </div>
                          <div class="muted small">
                            slot {slot.slot} · {slot.local ? 'this node' : 'remote'}
                          </div>
                          <div class="muted small mono break" title="Drive id">
                            {slot.uuid}
                          </div>
                          <ProgressBar value={percent(slot.usedBytes, slot.totalBytes)} label={`Use of ${slot.endpoint}`} />
                          <div class="small">
                            {slot.state === 'online' ? `${bytes(slot.usedBytes)} of ${bytes(slot.totalBytes)}` : 'no answer'}
                          </div>
                          {heal && heal.state !== 'healed' ? (
                            <div class="small">
                              healing: {heal.objectsHealed} objects rebuilt, {heal.objectsFailed} failed
                            </div>
                          ) : null}
                        </div>
                      );
                    })}
                  </div>
                </div>
              ))}
            </Card>
          ))}
        </>
      ) : null}
    </div>
  );
}
