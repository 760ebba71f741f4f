/**
 * Bucket notification targets of the node that answers: each target's type, ARN, settings
 * (secrets left out) and queue state; targets added and removed at run time (every node, kept in
 * event-targets.bin); and a bucket's events live, as a long-lived answer (`rc watch`). Targets of
 * the environment (SVC_NOTIFY_*) are listed but cannot be changed here.
 */
import { adminAction as admin } from '../../iam/index.js';
import { SvcError } from '../../errors/index.js';
import type { ListenFilter } from '../../ops/events/listen.js';
import type { TargetStatus } from '../../ops/events/notifier.js';
import type { AdminContext, AdminRequest, AdminRoute } from './context.js';
import { jsonBody, mutationQuery, noQuery, statusQuery } from './query.js';
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
    source: schema.oneOfValues(['environment', 'api'], 'where it is configured: the environment (SVC_NOTIFY_*, fixed) or the admin API (rc admin event target add|rm)'),
  },
  { description: 'One event target and its queue on this node.' },
);

const targetBody = schema.object(
  {
    type: schema.oneOfValues(['webhook', 'nats', 'redis', 'mqtt', 'amqp', 'postgres'], 'the kind of target'),
    id: schema.text('the target id: 1 to 64 letters, digits, - or _ (its ARN is arn:svc:sqs::<id>:<type>)'),
    settings: schema.openObject("its settings by the names of the environment's (ENDPOINT, AUTH_TOKEN, ADDRESS, SUBJECT...), each a string"),
    queueLimit: schema.integer('events its queue holds at most (default 100000)', { minimum: 1 }),
  },
  { optional: ['queueLimit'], description: 'A target to add, or to change when its type and id name one added before.' },
);

export const eventRoutes: AdminRoute[] = [
  {
    method: 'GET',
    path: '/svc/admin/v4/event/targets',
    schema: {
      summary: 'Event targets and their queues',
      description: "This node's bucket notification targets (from SVC_NOTIFY_* and added through the API), each with its queue: depth, oldest event's age, events sent, failed deliveries, events dropped and quarantined. Unknown query parameters are ignored.",
      querystring: schema.statusQuery({}),
      response: schema.object({
        targets: schema.list(eventTargetSchema, 'every target, by ARN'),
        listeners: schema.object({ active: count('live listeners (rc watch) on this node, and listeners of other nodes it relays events to'), cutOff: count('listeners cut off for reading too slowly, since this node started') }),
      }),
      example: {
        response: {
          targets: [{
            arn: 'arn:svc:sqs::1:webhook', id: '1', type: 'webhook', settings: { ENDPOINT: 'http://127.0.0.1:8080/events' }, queueLimit: 100_000,
            queued: 3, oldestAgeSeconds: 12.5, sent: 1204, failed: 7, dropped: 0, quarantined: 0, lastError: 'fetch failed', source: 'environment',
          }],
          listeners: { active: 1, cutOff: 0 },
        },
      },
    },
    access: { actions: [admin.serverInfo] },
    handle: async (context) => ({
      targets: (context.events?.status() ?? []).map((target) => targetAnswer(target, context.nowMs())),
      listeners: context.events?.listeners?.() ?? { active: 0, cutOff: 0 },
    }),
  },
  {
    method: 'GET',
    path: '/svc/admin/v4/event/listen',
    schema: {
      summary: "A bucket's events, live",
      description:
        "A long-lived answer (`application/x-ndjson`, chunked) with one line per event of the bucket raised on any node, whether or not a notification rule matches it: the event as targets receive it (`{EventName, Key, Records}`). A `{\"Watching\": {bucket, nodes, unreachable}}` line follows once every node follows the listener, a blank line comes every 15 s while nothing happens, and a listener that reads too slowly gets a last `{\"Error\": {\"Code\": \"SlowDown\", ...}}` line and the answer ends. `events` is a comma-separated list of event names or families (`s3:ObjectCreated:*,s3:ObjectRemoved:Delete`; default every event); `prefix` and `suffix` narrow the keys. Refusals: `InvalidQueryParameter`, `InvalidArgument` (an unknown event name), `NoSuchBucket`.",
      querystring: schema.statusQuery(
        { bucket: schema.text('bucket'), prefix: schema.text('only keys starting with it'), suffix: schema.text('only keys ending with it'), events: schema.text('comma-separated event names or families (default: every event)') },
        ['bucket'],
      ),
      response: schema.openObject('each line of the answer: an event ({EventName, Key, Records}), {Watching: ...} or a last {Error: ...}'),
      example: {
        query: 'bucket=thumbnails&events=s3:ObjectCreated:*',
        response: { EventName: 's3:ObjectCreated:Put', Key: 'thumbnails/cat.jpg', Records: [{ eventVersion: '2.1', eventSource: 'aws:s3', eventName: 'ObjectCreated:Put', s3: { bucket: { name: 'thumbnails' }, object: { key: 'cat.jpg', size: 48213 } } }] },
      },
    },
    access: {
      actions: [],
      conditional: { actions: ['s3:ListenBucketNotification'], when: 'always: on the bucket', permissions: (_context, request) => [{ action: 's3:ListenBucketNotification', bucket: listenFilterOf(request).bucket }] },
    },
    handle: async (context, request) => {
      const filter = listenFilterOf(request);
      return requireTargets(context).listen(filter);
    },
  },
  {
    method: 'POST',
    path: '/svc/admin/v4/event/target/add',
    schema: {
      summary: 'Add or change an event target',
      description:
        "Adds a bucket notification target on every node, at once and without a restart, kept in event-targets.bin; adding one with the type and id of an earlier one changes its settings (its queue is kept). The settings are those of the environment's variables without the `SVC_NOTIFY_<TYPE>_` prefix and `_<ID>` suffix, checked the same way. The answer never holds a secret (AUTH_TOKEN, PASSWORD, TOKEN, URL, CONNECTION_STRING). Refusals: `InvalidArgument` (naming the setting), `EventTargetReadOnly` (a target of the environment has this ARN).",
      querystring: schema.noQuery(),
      body: targetBody,
      response: eventTargetSchema,
      example: {
        body: { type: 'webhook', id: 'thumbnails', settings: { ENDPOINT: 'http://127.0.0.1:8080/events', AUTH_TOKEN: 'change-me' } },
        response: {
          arn: 'arn:svc:sqs::thumbnails:webhook', id: 'thumbnails', type: 'webhook', settings: { ENDPOINT: 'http://127.0.0.1:8080/events' }, queueLimit: 100_000,
          queued: 0, oldestAgeSeconds: 0, sent: 0, failed: 0, dropped: 0, quarantined: 0, lastError: null, source: 'api',
        },
      },
    },
    access: { actions: [admin.configUpdate] },
    handle: async (context, request) => {
      noQuery(request);
      return targetAnswer(await requireTargets(context).addTarget(targetBodyOf(request)), context.nowMs());
    },
  },
  {
    method: 'POST',
    path: '/svc/admin/v4/event/target/remove',
    schema: {
      summary: 'Remove an event target',
      description:
        'Removes a target added through the API from every node, with its queue (what it held is not delivered). Refusals: `NoSuchEventTarget`, `EventTargetInUse` (a bucket\'s notification rule names it: the buckets are listed), `EventTargetReadOnly` (a target of the environment).',
      querystring: schema.mutationQuery({ arn: schema.text('the target, arn:svc:sqs::<id>:<type>') }, ['arn']),
      response: schema.object({ removed: schema.text('the ARN removed') }),
      example: { query: 'arn=arn:svc:sqs::gone:webhook', response: { removed: 'arn:svc:sqs::gone:webhook' } },
    },
    access: { actions: [admin.configUpdate] },
    handle: async (context, request) => {
      const arn = mutationQuery(request.rawQuery, ['arn']).get('arn');
      if (arn === undefined || arn === '') throw new SvcError('InvalidQueryParameter', 'the arn parameter is required', { parameter: 'arn' });
      await requireTargets(context).removeTarget(arn);
      return { removed: arn };
    },
  },
];

function targetAnswer(target: TargetStatus, nowMs: number): Record<string, unknown> {
  return {
    arn: target.arn, id: target.id, type: target.type, settings: target.settings, queueLimit: target.queueLimit,
    queued: target.depth,
    oldestAgeSeconds: target.oldestQueuedMs === undefined ? 0 : Math.max(0, nowMs - target.oldestQueuedMs) / 1000,
    sent: target.sent, failed: target.failed, dropped: target.dropped, quarantined: target.quarantined, lastError: target.lastError ?? null,
    source: target.source,
  };
}

function targetBodyOf(request: AdminRequest): { type: string; id: string; settings: Record<string, string>; queueLimit?: number } {
  const body = jsonBody(request, 'the target') as { type: string; id: string; settings: Record<string, unknown>; queueLimit?: number };
  const notText = Object.entries(body.settings).find(([, value]) => typeof value !== 'string');
  if (notText) throw new SvcError('InvalidArgument', `settings.${notText[0]} must be a string`, { field: `settings.${notText[0]}` });
  return { type: body.type, id: body.id, settings: body.settings as Record<string, string>, ...(body.queueLimit !== undefined ? { queueLimit: body.queueLimit } : {}) };
}

function requireTargets(context: AdminContext): Required<NonNullable<AdminContext['events']>> {
  const events = context.events;
  if (!events?.addTarget || !events.removeTarget || !events.listen || !events.listeners) throw new SvcError('NotImplemented', 'this node cannot change its event targets');
  return events as Required<NonNullable<AdminContext['events']>>;
}

/** The listen route's query: a bucket (required), and optional prefix, suffix and comma-separated events. */
export function listenFilterOf(request: AdminRequest): ListenFilter {
  const query = statusQuery(request.rawQuery);
  const bucket = query.get('bucket');
  if (bucket === undefined || bucket === '') throw new SvcError('InvalidQueryParameter', 'the bucket parameter is required', { parameter: 'bucket' });
  const events = query.get('events')?.split(',').map((name) => name.trim()).filter((name) => name !== '');
  return { bucket, ...(query.get('prefix') ? { prefix: query.get('prefix')! } : {}), ...(query.get('suffix') ? { suffix: query.get('suffix')! } : {}), ...(events && events.length > 0 ? { events } : {}) };
}
