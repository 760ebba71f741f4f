/**
 * Bucket notification families, per target (labelled by its ARN, so bounded by the deployment's
 * configuration): queue depth, events sent, failed deliveries, events dropped (queue full) and
 * quarantined (undecodable), and the age of the oldest queued event. Read from the queues when
 * scraped.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { TargetStatus } from '../../ops/events/notifier.js';
import { metricsPrefix } from './families.js';

export function registerEventMetrics(registry: Registry, targets: () => TargetStatus[], nowMs: () => number): void {
  const registers = [registry];
  const labelNames = ['target', 'type'];
  const labels = (target: TargetStatus): { target: string; type: string } => ({ target: target.arn, type: target.type });
  const gauge = (name: string, help: string, value: (target: TargetStatus) => number): void => void new Gauge({
    name: metricsPrefix + name, help, labelNames, registers,
    collect() {
      this.reset();
      for (const target of targets()) this.set(labels(target), value(target));
    },
  });
  const counter = (name: string, help: string, value: (target: TargetStatus) => number): void => void new Counter({
    name: metricsPrefix + name, help, labelNames, registers,
    collect() {
      this.reset();
      for (const target of targets()) this.inc(labels(target), value(target));
    },
  });
  gauge('notify_queued_events', 'Events waiting in a target\'s queue on this node.', (target) => target.depth);
  gauge('notify_oldest_event_age_seconds', 'Age of the oldest event waiting in a target\'s queue (0 when empty).', (target) => (target.oldestQueuedMs === undefined ? 0 : Math.max(0, nowMs() - target.oldestQueuedMs) / 1000));
  counter('notify_sent_events_total', 'Events a target took since this node started.', (target) => target.sent);
  counter('notify_failed_deliveries_total', 'Deliveries to a target that failed (each is retried) since this node started.', (target) => target.failed);
  counter('notify_dropped_events_total', 'Events dropped because a target\'s queue was full, since this node started.', (target) => target.dropped);
  counter('notify_quarantined_events_total', 'Queued event files that did not decode, moved to quarantine, since this node started.', (target) => target.quarantined);
}
