/**
 * The deployment's health from the server (GET health): a banner on every page and a mark in the
 * navigation, amber when a set's margin shrank, red when a set lost read or write quorum, with the
 * runbook section to follow. Sessions that may not see the cluster get neither.
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { api } from './api';
import { usePoll } from './components';

export type { ClassMargin, HealthStatus } from '../../contracts/health';
import type { HealthModel, HealthStatus } from '../../contracts/health';

/** The server's health model, as the pages call it. */
export type Health = HealthModel;

export const healthIntervalMs = 5000;

export const HealthContext = createContext<Health | undefined>(undefined);

export function useHealth(): Health | undefined {
  return useContext(HealthContext);
}

/** Polls the health model while the session may read it (`enabled`). */
export function useHealthPoll(enabled: boolean): Health | undefined {
  return usePoll(() => (enabled ? api<Health>('GET', 'health') : Promise.resolve(undefined)), enabled ? healthIntervalMs : 0, [enabled]).data;
}

const titles: Record<HealthStatus, string> = { ok: 'Healthy', degraded: 'Degraded: redundancy reduced', critical: 'Quorum lost' };

/** The banner at the top of every page; nothing while everything is healthy. */
export function HealthBanner(props: { health: Health | undefined }) {
  const health = props.health;
  if (!health || health.status === 'ok') return null;
  const sets = health.sets.filter((set) => set.status !== 'ok');
  return (
    <section class={`health-banner ${health.status}`} data-status={health.status} aria-label="Deployment health">
      <div class="health-head" role={health.status === 'critical' ? 'alert' : 'status'}>
        <span class="health-dot" aria-hidden="true" />
        <strong>{titles[health.status]}</strong>
        <span>{health.summary}</span>
      </div>
      <ul class="health-sets small">
        {sets.slice(0, 4).map((set) => (
          <li key={`${set.pool}/${set.set}`}>
            Pool {set.pool} set {set.set}: {set.drivesOnline}/{set.drivesTotal} drives;{' '}
            {set.classes.map((margin) => `${margin.storageClass} write margin ${margin.writeMargin}, read margin ${margin.readMargin}`).join('; ')}
          </li>
        ))}
      </ul>
      <div class="health-links small">
        <a href="#/cluster">Show the cluster</a>
        {health.runbook ? (
          <a href="assets/runbooks.md" target="_blank" rel="noopener">
            Runbook: {health.runbook.section} (docs/runbooks.md)
          </a>
        ) : null}
      </div>
    </section>
  );
}

/** A coloured dot beside a navigation entry, named for screen readers. */
export function HealthMark(props: { health: Health | undefined }) {
  const status = props.health?.status;
  if (!status) return null;
  return <span class={`health-mark ${status}`} data-status={status} role="img" aria-label={status === 'ok' ? 'healthy' : status === 'degraded' ? 'degraded' : 'quorum lost'} title={titles[status]} />;
}
