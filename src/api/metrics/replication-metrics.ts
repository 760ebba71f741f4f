/**
 * Bucket replication families, per remote target (labelled by its id, so bounded by the
 * deployment's configuration): tasks waiting in this node's queue, completed, bytes sent, failed
 * attempts and dropped tasks. Read from the queues when scraped.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { EventQueueStats } from '../../ops/events/queue.js';
import { metricsPrefix } from './families.js';

export interface ReplicationQueueStats {
  target: string;
  stats: EventQueueStats;
  completed: number;
  sentBytes: number;
}

export function registerReplicationMetrics(registry: Registry, queues: () => ReplicationQueueStats[]): void {
  const common = { labelNames: ['target'], registers: [registry] };
  new Gauge({
    name: `${metricsPrefix}replication_pending_tasks`,
    help: 'Replication tasks waiting in a remote target\'s queue on this node.',
    ...common,
    collect() {
      this.reset();
      for (const queue of queues()) this.set({ target: queue.target }, queue.stats.depth);
    },
  });
  const counters: [name: string, help: string, value: (queue: ReplicationQueueStats) => number][] = [
    ['replication_completed_total', 'Versions and delete markers a remote target took since this node started.', (queue) => queue.completed],
    ['replication_sent_bytes_total', 'Bytes of version data a remote target took since this node started.', (queue) => queue.sentBytes],
    ['replication_failed_total', 'Replication attempts that failed (each is retried) since this node started.', (queue) => queue.stats.failed],
    ['replication_dropped_total', 'Replication tasks dropped because a queue was full, since this node started.', (queue) => queue.stats.dropped],
  ];
  for (const [name, help, value] of counters) {
    new Counter({
      name: metricsPrefix + name,
      help,
      ...common,
      collect() {
        this.reset();
        for (const queue of queues()) this.inc({ target: queue.target }, value(queue));
      },
    });
  }
}
