/**
 * Bucket notification targets of the node that answers: each target's type, ARN, settings
 * (secrets left out) and queue state. Targets come from the environment (SVC_NOTIFY_*).
 */
import { adminAction as admin } from '../../iam/index.js';
import type { AdminRoute } from './context.js';
import * as schema from './route-schema.js';

const count = (description: string): schema.JsonSchema => schema.integer(description, { minimum: 0 });

export const eventTargetSchema = schema.object(
  {
    arn: schema.text('what a notification rule names: arn:svc:sqs::<id>:<type>'),
    id: schema.text('the target id (the <ID> of its SVC_NOTIFY_* variables)'),
    type: schema.oneOfValues(['webhook', 'nats', 'redis', 'mqtt', 'amqp', 'postgres'], 'the kind of target'),
    settings: schema.openObject('its settings by name (ENDPOINT, ADDRESS, SUBJECT...), secrets left out'),
    queueLimit: count('events its queue holds at most; full, the oldest is dropped'),
    queued: count('events waiting in its queue on this node'),
    oldestAgeSeconds: schema.number('age of the oldest waiting event (0 when none waits)'),
    sent: count('events the target took since this node started'),
    failed: count('failed deliveries since this node started (each is retried)'),
    dropped: count('events dropped because the queue was full, since this node started'),
    quarantined: count('queued event files that did not decode, since this node started'),
    lastError: schema.nullable(schema.text('why the last delivery failed (null after a success)')),
  },
  { description: 'One event target and its queue on this node.' },
);

export const eventRoutes: AdminRoute[] = [
  {
    method: 'GET',
    path: '/svc/admin/v4/event/targets',
    schema: {
      summary: 'Event targets and their queues',
      description: "This node's bucket notification targets (from SVC_NOTIFY_*), each with its queue: depth, oldest event's age, events sent, failed deliveries, events dropped and quarantined. Unknown query parameters are ignored.",
      querystring: schema.statusQuery({}),
      response: schema.object({ targets: schema.list(eventTargetSchema, 'every target, by ARN') }),
      example: {
        response: {
          targets: [{
            arn: 'arn:svc:sqs::1:webhook', id: '1', type: 'webhook', settings: { ENDPOINT: 'http://127.0.0.1:8080/events' }, queueLimit: 100_000,
            queued: 3, oldestAgeSeconds: 12.5, sent: 1204, failed: 7, dropped: 0, quarantined: 0, lastError: 'fetch failed',
          }],
        },
      },
    },
    access: { actions: [admin.serverInfo] },
    handle: async (context) => ({
      targets: (context.events?.status() ?? []).map((target) => ({
        arn: target.arn, id: target.id, type: target.type, settings: target.settings, queueLimit: target.queueLimit,
        queued: target.depth,
        oldestAgeSeconds: target.oldestQueuedMs === undefined ? 0 : Math.max(0, context.nowMs() - target.oldestQueuedMs) / 1000,
        sent: target.sent, failed: target.failed, dropped: target.dropped, quarantined: target.quarantined, lastError: target.lastError ?? null,
      })),
    }),
  },
];
