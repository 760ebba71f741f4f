/**
 * Remote tier families, per tier (labelled by its name, so bounded by the deployment's
 * configuration): tier objects waiting in this node's deletion queue, deleted, failed attempts
 * and dropped deletions. Read from the queues when scraped.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { TierDeletionStats } from '../../ops/tier/deletion-queue.js';
import { metricsPrefix } from './families.js';

export function registerTierMetrics(registry: Registry, queues: () => TierDeletionStats[]): void {
  const common = { labelNames: ['tier'], registers: [registry] };
  new Gauge({
    name: `${metricsPrefix}tier_deletion_queued_objects`,
    help: "Tier objects waiting in a tier's deletion queue on this node (their versions are gone).",
    ...common,
    collect() {
      this.reset();
      for (const queue of queues()) this.set({ tier: queue.tier }, queue.pending);
    },
  });
  const counters: [name: string, help: string, value: (queue: TierDeletionStats) => number][] = [
    ['tier_deleted_objects_total', 'Tier objects a tier deleted for this node since it started.', (queue) => queue.deleted],
    ['tier_deletion_failures_total', 'Tier object deletions that failed (each is retried) since this node started.', (queue) => queue.failed],
    ['tier_deletion_dropped_objects_total', 'Tier object deletions dropped because a queue was full, since this node started.', (queue) => queue.dropped],
  ];
  for (const [name, help, value] of counters) {
    new Counter({
      name: metricsPrefix + name,
      help,
      ...common,
      collect() {
        this.reset();
        for (const queue of queues()) this.inc({ tier: queue.tier }, value(queue));
      },
    });
  }
}
