/**
 * A target's event queue on its own (real files in a temporary directory; the target is a
 * function): events are delivered in the order queued and survive a reopen; a failed delivery is
 * retried; the events of concurrent calls share a file and its fsyncs (counted through the
 * queue's fsync hook) and a reopen delivers each of them in order; an event file that does not
 * decode (torn, another magic, another version, a file of several events of the wrong count) is
 * moved to quarantine with its events counted while the rest flow; a full queue drops its oldest
 * event not in flight, counts it and warns. Several deliveries in flight keep each key's order and stay at least once,
 * also through a real webhook that fails some requests (fast-check prints the seed to replay).
 * The event file decoder is strict.
 * Also the rules' matching and overlap, and AWS's key encoding in records.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeEventFile, EventQueue, eventFileMagic, eventGroupMagic, writeRawEventFile, type EventQueueOptions } from '../src/ops/events/queue.js';
import { encodeStateFile } from '../src/format/state-file.js';
import { ruleMatches, rulesOverlap } from '../src/ops/events/event-names.js';
import { encodeRecordKey } from '../src/ops/events/records.js';
import { readTargetConfigs } from '../src/ops/events/target-config.js';
import { createTarget } from '../src/ops/events/targets.js';
import type { EventMessage } from '../src/ops/events/records.js';
import { codeOf } from './helpers/codes.js';

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'svc-event-queue-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** Retries come on the next turn of the event loop: no waiting in tests. */
const soonTimers = { setTimeout: (callback: () => void) => setImmediate(callback), clearTimeout: (handle: unknown) => clearImmediate(handle as NodeJS.Immediate) };

function options(send: EventQueueOptions['send'], overrides: Partial<EventQueueOptions> = {}): EventQueueOptions {
  return {
    directory: join(directory, 'webhook-1'), quarantineDirectory: join(directory, 'quarantine', 'webhook-1'), limitEntries: 100, send,
    timers: soonTimers, nowMs: () => 1_800_000_000_000, retryBaseMs: 1, retryMaxMs: 1, sendTimeoutMs: 5_000, dropWarningIntervalMs: 60_000,
    logger: { warn: () => undefined }, ...overrides,
  };
}

async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; !condition(); turn += 1) {
    if (turn > 10_000) throw new Error('condition never held');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

describe('event queue', () => {
  it('delivers in order, keeps what it could not deliver across a reopen, and retries failures', async () => {
    const held = await EventQueue.open(options(() => new Promise(() => undefined)));
    for (let index = 0; index < 5; index += 1) await held.enqueue({ index });
    expect(held.stats().depth).toBe(5);
    await held.close();
    const received: unknown[] = [];
    let failuresLeft = 2;
    const queue = await EventQueue.open(options(async (payload) => {
      if (failuresLeft-- > 0) throw new Error('broker away');
      received.push(payload);
    }));
    await until(() => queue.stats().depth === 0);
    expect(received).toEqual([0, 1, 2, 3, 4].map((index) => ({ index })));
    expect(queue.stats()).toMatchObject({ sent: 5, failed: 2, dropped: 0, quarantined: 0 });
    expect(queue.stats().lastError).toBeUndefined();
    await queue.enqueue({ index: 5 });
    await until(() => received.length === 6);
    await queue.close();
    expect((await readdir(join(directory, 'webhook-1'))).filter((name) => name.endsWith('.evt'))).toEqual([]);
  });

  it('writes the events of concurrent calls together, with fewer fsyncs than events, and a restart delivers every one in order', async () => {
    let syncs = 0;
    const held = await EventQueue.open(options(() => new Promise(() => undefined), { limitEntries: 1_000, onSync: () => void (syncs += 1) }));
    const calls: Promise<void>[] = [];
    for (let index = 0; index < 200; index += 1) {
      calls.push(held.enqueue({ index }, `k${index % 7}`));
      // Calls keep arriving while earlier ones are being written.
      if (index % 10 === 9) await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(calls);
    expect(held.stats().depth).toBe(200);
    await held.close();
    const files = (await readdir(join(directory, 'webhook-1'))).filter((name) => name.endsWith('.evt'));
    expect(files.some((name) => /^\d{16}-\d{13}-\d+\.evt$/.test(name))).toBe(true);
    expect(syncs).toBe(2 * files.length);
    expect(syncs).toBeLessThan(200);
    const received: unknown[] = [];
    let syncsAfter = 0;
    const queue = await EventQueue.open(options(async (payload) => void received.push(payload), { limitEntries: 1_000, concurrency: 4, onSync: () => void (syncsAfter += 1) }));
    await until(() => queue.stats().depth === 0);
    await queue.close();
    expect(received).toEqual(Array.from({ length: 200 }, (_, index) => ({ index })));
    expect(syncsAfter).toBe(0);
    expect((await readdir(join(directory, 'webhook-1'))).filter((name) => name.endsWith('.evt'))).toEqual([]);
  });

  it('a file of several events that does not decode goes to quarantine whole, each of its events counted', async () => {
    const queueDirectory = join(directory, 'webhook-1');
    const held = await EventQueue.open(options(() => new Promise(() => undefined)));
    await held.close();
    const at = 1_800_000_000_000;
    const torn = await writeRawEventFile(queueDirectory, 0, at, encodeStateFile(eventGroupMagic, { version: 1, queuedMs: at, payloads: ['a', 'b', 'c'] }).subarray(0, 20), 3);
    const short = await writeRawEventFile(queueDirectory, 3, at, encodeStateFile(eventGroupMagic, { version: 1, queuedMs: at, payloads: ['d'] }), 2);
    const single = await writeRawEventFile(queueDirectory, 5, at, encodeStateFile(eventGroupMagic, { version: 1, queuedMs: at, payloads: ['x'] }));
    await writeRawEventFile(queueDirectory, 6, at, encodeStateFile(eventGroupMagic, { version: 1, queuedMs: at, payloads: ['e', 'f'] }), 2);
    const received: unknown[] = [];
    const queue = await EventQueue.open(options(async (payload) => void received.push(payload)));
    await until(() => queue.stats().depth === 0);
    await queue.close();
    expect(received).toEqual(['e', 'f']);
    expect(queue.stats().quarantined).toBe(6);
    expect((await readdir(join(directory, 'quarantine', 'webhook-1'))).sort()).toEqual([torn, short, single].sort());
    expect((await readdir(queueDirectory)).filter((name) => name.endsWith('.evt'))).toEqual([]);
  });

  it('moves an event file that does not decode to quarantine, counts it, and delivers the rest', async () => {
    const queueDirectory = join(directory, 'webhook-1');
    const held = await EventQueue.open(options(() => new Promise(() => undefined)));
    await held.close();
    const torn = await writeRawEventFile(queueDirectory, 0, 1_800_000_000_000, encodeStateFile(eventFileMagic, { version: 1, queuedMs: 1, payload: 'x' }).subarray(0, 12));
    const otherMagic = await writeRawEventFile(queueDirectory, 1, 1_800_000_000_000, encodeStateFile('SVXX', { version: 1, queuedMs: 1, payload: 'x' }));
    const newer = await writeRawEventFile(queueDirectory, 2, 1_800_000_000_000, encodeStateFile(eventFileMagic, { version: 2, queuedMs: 1, payload: 'x' }));
    await writeRawEventFile(queueDirectory, 3, 1_800_000_000_000, encodeStateFile(eventFileMagic, { version: 1, queuedMs: 1, payload: 'good' }));
    const received: unknown[] = [];
    const warnings: Record<string, unknown>[] = [];
    const queue = await EventQueue.open(options(async (payload) => void received.push(payload), { logger: { warn: (fields) => void warnings.push(fields) } }));
    await until(() => queue.stats().depth === 0);
    await queue.close();
    expect(received).toEqual(['good']);
    expect(queue.stats().quarantined).toBe(3);
    expect((await readdir(join(directory, 'quarantine', 'webhook-1'))).sort()).toEqual([torn, otherMagic, newer]);
    expect(warnings.map((warning) => warning.file)).toEqual([torn, otherMagic, newer]);
  });

  it('full, drops its oldest event that is not being delivered, counts it and warns once per interval', async () => {
    let release: () => void = () => undefined;
    const received: unknown[] = [];
    const warnings: Record<string, unknown>[] = [];
    let sends = 0;
    const queue = await EventQueue.open(options(async (payload) => {
      sends += 1;
      await new Promise<void>((resolve) => (release = resolve));
      received.push(payload);
    }, { limitEntries: 3, logger: { warn: (fields) => void warnings.push(fields) } }));
    for (let index = 1; index <= 5; index += 1) await queue.enqueue(index);
    expect(queue.stats()).toMatchObject({ depth: 3, dropped: 2 });
    expect(warnings).toHaveLength(1);
    for (let turn = 0; turn < 3; turn += 1) {
      await until(() => received.length === turn && queue.stats().depth === 3 - turn && sends === turn + 1);
      release();
    }
    await until(() => queue.stats().depth === 0);
    await queue.close();
    expect(received).toEqual([1, 4, 5]);
  });

  it('with several in flight, keeps each key\'s order and delivers every event at least once through failures', async () => {
    const seed = Number(process.env.SVC_TEST_SEED ?? Date.now() % 1_000_000);
    console.log(`event queue concurrency seed ${seed} (SVC_TEST_SEED replays it)`);
    await fc.assert(fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 40 }), fc.array(fc.boolean(), { maxLength: 60 }), async (keys, failPlan) => {
      await rm(join(directory, 'webhook-1'), { recursive: true, force: true });
      const received: { key: string; index: number }[] = [];
      let inFlight = 0;
      let most = 0;
      let attempt = 0;
      const queue = await EventQueue.open(options(async (payload) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        try {
          await new Promise((resolve) => setImmediate(resolve));
          if (failPlan[attempt++ % Math.max(failPlan.length, 1)] === true && attempt < 200) throw new Error('refused');
          received.push(payload as { key: string; index: number });
        } finally {
          inFlight -= 1;
        }
      }, { concurrency: 4 }));
      for (const [index, key] of keys.entries()) await queue.enqueue({ key: `k${key}`, index }, `k${key}`);
      await until(() => queue.stats().depth === 0);
      await queue.close();
      expect(most).toBeLessThanOrEqual(4);
      expect(new Set(received.map((event) => event.index)).size).toBe(keys.length);
      for (const key of new Set(keys)) {
        const order = received.filter((event) => event.key === `k${key}`).map((event) => event.index);
        expect(order).toEqual([...order].sort((first, second) => first - second));
      }
    }), { seed, numRuns: 25 });
  });

  it('an event found on the drive at open (its key unknown) goes alone, in its turn', async () => {
    const held = await EventQueue.open(options(() => new Promise(() => undefined)));
    await held.enqueue('old');
    await held.close();
    const received: unknown[] = [];
    let inFlight = 0;
    let overlapped = false;
    const queue = await EventQueue.open(options(async (payload) => {
      inFlight += 1;
      if (payload === 'old' && inFlight > 1) overlapped = true;
      await new Promise((resolve) => setImmediate(resolve));
      inFlight -= 1;
      received.push(payload);
    }, { concurrency: 4 }));
    await queue.enqueue('a', 'a');
    await queue.enqueue('b', 'b');
    await until(() => queue.stats().depth === 0);
    await queue.close();
    expect(received[0]).toBe('old');
    expect(overlapped).toBe(false);
  });

  it('a real webhook that fails every third request still receives every event, each key in order', async () => {
    const bodies: EventMessage[] = [];
    let requests = 0;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        requests += 1;
        if (requests % 3 === 0) {
          response.statusCode = 503;
          response.end();
          return;
        }
        bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        response.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const config = readTargetConfigs({ SVC_NOTIFY_WEBHOOK_ENABLE_1: 'on', SVC_NOTIFY_WEBHOOK_ENDPOINT_1: `http://127.0.0.1:${port}/events` })[0]!;
    const target = createTarget(config);
    const queue = await EventQueue.open(options((payload, signal) => target.send(payload as EventMessage, signal), { concurrency: 8 }));
    const message = (key: string, index: number): EventMessage => ({ EventName: 's3:ObjectCreated:Put', Key: `b/${key}`, Records: [{ index } as never] });
    for (let index = 0; index < 30; index += 1) await queue.enqueue(message(`key${index % 5}`, index), `b/key${index % 5}`);
    await until(() => queue.stats().depth === 0);
    await queue.close();
    await target.close();
    server.close();
    expect(queue.stats().failed).toBeGreaterThan(0);
    const indexes = bodies.map((body) => (body.Records[0] as unknown as { index: number }).index);
    expect(new Set(indexes).size).toBe(30);
    for (let key = 0; key < 5; key += 1) {
      const order = bodies.filter((body) => body.Key === `b/key${key}`).map((body) => (body.Records[0] as unknown as { index: number }).index);
      expect(order).toEqual([...order].sort((first, second) => first - second));
    }
  });

  it('decodes only the version 1 documents it wrote: any change of their bytes is refused or decodes to the same payload', () => {
    const bytes = encodeStateFile(eventFileMagic, { version: 1, queuedMs: 5, payload: { Records: [{ eventName: 'ObjectCreated:Put' }] } });
    expect(decodeEventFile(bytes)).toEqual({ Records: [{ eventName: 'ObjectCreated:Put' }] });
    fc.assert(fc.property(fc.nat(bytes.length - 1), fc.integer({ min: 1, max: 255 }), (at, flip) => {
      const changed = Uint8Array.from(bytes);
      changed[at] = changed[at]! ^ flip;
      expect(['CorruptFormat', 'UnsupportedFormat']).toContain(codeOf(() => decodeEventFile(changed)));
    }));
  });
});

describe('rules and records', () => {
  const rule = { id: 'r', kind: 'queue' as const, arn: 'arn:svc:sqs::1:webhook', events: ['s3:ObjectCreated:*', 's3:ObjectRemoved:Delete'], prefix: 'images/', suffix: '.jpg' };
  it('a rule matches its events by name or family, and keys by prefix and suffix', () => {
    expect(ruleMatches(rule, 'ObjectCreated:Post', 'images/cat.jpg')).toBe(true);
    expect(ruleMatches(rule, 'ObjectRemoved:Delete', 'images/cat.jpg')).toBe(true);
    expect(ruleMatches(rule, 'ObjectRemoved:DeleteMarkerCreated', 'images/cat.jpg')).toBe(false);
    expect(ruleMatches(rule, 'ObjectCreated:Put', 'docs/cat.jpg')).toBe(false);
    expect(ruleMatches(rule, 'ObjectCreated:Put', 'images/cat.png')).toBe(false);
  });
  it('two rules overlap when an event and a key could match both', () => {
    expect(rulesOverlap(rule, { ...rule, events: ['s3:ObjectCreated:Put'], prefix: 'images/raw/' })).toBe(true);
    expect(rulesOverlap(rule, { ...rule, events: ['s3:ObjectTagging:*'] })).toBe(false);
    expect(rulesOverlap(rule, { ...rule, prefix: 'docs/' })).toBe(false);
    expect(rulesOverlap(rule, { ...rule, suffix: '.png' })).toBe(false);
    expect(rulesOverlap({ ...rule, prefix: undefined, suffix: undefined }, { ...rule, prefix: 'a/' })).toBe(true);
  });
  it('keys are URL-encoded in records as S3 writes them', () => {
    expect(encodeRecordKey('photos/cat 1+2.jpg')).toBe('photos/cat+1%2B2.jpg');
    expect(encodeRecordKey('日本/ä')).toBe('%E6%97%A5%E6%9C%AC/%C3%A4');
  });
});

describe('targets from the environment', () => {
  it('reads MinIO\'s names under SVC_, with the id last, and refuses a target with a missing or bad setting by its variable', () => {
    const targets = readTargetConfigs({
      SVC_NOTIFY_WEBHOOK_ENABLE_primary: 'on', SVC_NOTIFY_WEBHOOK_ENDPOINT_primary: 'http://127.0.0.1:8080/events', SVC_NOTIFY_WEBHOOK_AUTH_TOKEN_primary: 'secret',
      SVC_NOTIFY_NATS_ENABLE: 'on', SVC_NOTIFY_NATS_ADDRESS: '127.0.0.1:4222', SVC_NOTIFY_NATS_SUBJECT: 'events', SVC_NOTIFY_NATS_QUEUE_LIMIT: '10',
      SVC_NOTIFY_REDIS_ENABLE_off: 'off',
    });
    expect(targets.map((target) => [target.arn, target.queueLimitEntries])).toEqual([['arn:svc:sqs::_:nats', 10], ['arn:svc:sqs::primary:webhook', 100_000]]);
    const refused = (env: Record<string, string>): string => {
      try {
        readTargetConfigs(env);
        return 'ok';
      } catch (error) {
        return String((error as { details?: { variable?: string } }).details?.variable);
      }
    };
    expect(refused({ SVC_NOTIFY_MQTT_ENABLE_1: 'on', SVC_NOTIFY_MQTT_BROKER_1: 'tcp://127.0.0.1:1883' })).toBe('SVC_NOTIFY_MQTT_TOPIC_1');
    expect(refused({ SVC_NOTIFY_MQTT_ENABLE_1: 'on', SVC_NOTIFY_MQTT_BROKER_1: 'tcp://127.0.0.1:1883', SVC_NOTIFY_MQTT_TOPIC_1: 't', SVC_NOTIFY_MQTT_QOS_1: '3' })).toBe('SVC_NOTIFY_MQTT_QOS_1');
    expect(refused({ SVC_NOTIFY_REDIS_ENABLE_1: 'on', SVC_NOTIFY_REDIS_ADDRESS_1: '127.0.0.1:6379', SVC_NOTIFY_REDIS_KEY_1: 'k', SVC_NOTIFY_REDIS_FORMAT_1: 'list' })).toBe('SVC_NOTIFY_REDIS_FORMAT_1');
    expect(refused({ SVC_NOTIFY_POSTGRES_ENABLE_1: 'on', SVC_NOTIFY_POSTGRES_CONNECTION_STRING_1: 'postgres://x', SVC_NOTIFY_POSTGRES_TABLE_1: 'a; DROP' })).toBe('SVC_NOTIFY_POSTGRES_TABLE_1');
    expect(refused({ SVC_NOTIFY_WEBHOOK_ENABLE_1: 'on', SVC_NOTIFY_WEBHOOK_ENDPOINT_1: 'ftp://host/x' })).toBe('SVC_NOTIFY_WEBHOOK_ENDPOINT_1');
  });
});
