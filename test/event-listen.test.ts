/**
 * Live listeners' bounds (src/ops/events/listen.ts): a stream nobody reads is cut off once its
 * buffer passes limits.eventListenBufferBytes, with a last SlowDown line, counted and logged; a
 * peer's subscription that is not polled while events pile up is cut off past
 * limits.eventListenRelayEvents, and its poller is told why; a poll answers at most a batch; a
 * subscription nobody polls is forgotten after its lease; `stop` ends one at once.
 */
import { describe, expect, it } from 'vitest';
import { EventListenHub, listenedEvents } from '../src/ops/events/listen.js';
import type { EventWatcher } from '../src/ops/events/notifier.js';
import type { EventMessage } from '../src/ops/events/records.js';
import { limits } from '../src/util/limits.js';

/** Timers a test moves by hand. */
function manualTimers() {
  let now = 0;
  const pending = new Map<number, { at: number; callback: () => void }>();
  let next = 0;
  return {
    setTimeout: (callback: () => void, delayMs: number) => {
      pending.set(++next, { at: now + delayMs, callback });
      return next;
    },
    clearTimeout: (handle: unknown) => void pending.delete(handle as number),
    advance(ms: number) {
      now += ms;
      for (const [id, timer] of [...pending]) if (timer.at <= now) {
        pending.delete(id);
        timer.callback();
      }
    },
  };
}

function hubWith(options: { peers?: ConstructorParameters<typeof EventListenHub>[0]['peers'] } = {}) {
  const watchers = new Set<EventWatcher>();
  const warnings: string[] = [];
  const timers = manualTimers();
  const hub = new EventListenHub({
    watch: (watcher) => {
      watchers.add(watcher);
      return () => void watchers.delete(watcher);
    },
    bucketExists: async (bucket) => bucket === 'photos',
    peers: options.peers ?? [],
    timers,
    logger: { warn: (fields, message) => void warnings.push(`${message} ${JSON.stringify(fields)}`) },
  });
  const raise = (key: string, size = 10) => {
    const message = { EventName: 's3:ObjectCreated:Put', Key: `photos/${key}`, Records: [{ eventName: 'ObjectCreated:Put', s3: { object: { key, size } } }] } as unknown as EventMessage;
    for (const watcher of watchers) watcher.deliver(message);
  };
  return { hub, watchers, warnings, timers, raise };
}

describe('live listeners', () => {
  it('a stream nobody reads is cut off past its buffer, with a last SlowDown line, counted and logged', async () => {
    const { hub, watchers, warnings, raise } = hubWith();
    const stream = await hub.open({ bucket: 'photos' });
    expect(watchers.size).toBe(1);
    const padding = 'x'.repeat(4096);
    let raised = 0;
    while (watchers.size > 0 && raised < 10_000) raise(`${padding}-${raised++}`);
    expect(watchers.size).toBe(0);
    // Cut off near the bound: each line holds the key twice, a little over 8 KiB.
    expect(raised * 8192).toBeGreaterThan(limits.eventListenBufferBytes * 0.9);
    expect(raised * 8192).toBeLessThan(limits.eventListenBufferBytes + 64 * 1024);
    expect(hub.stats()).toEqual({ active: 0, cutOff: 1 });
    expect(warnings.join('\n')).toContain('an event listener was cut off');
    let text = '';
    for await (const chunk of stream) text += chunk.toString();
    const last = JSON.parse(text.trim().split('\n').at(-1)!) as { Error: { Code: string; Message: string } };
    expect(last.Error.Code).toBe('SlowDown');
    expect(last.Error.Message).toContain(`${limits.eventListenBufferBytes} bytes`);
  });

  it("a peer's subscription holds at most its bound of events, then tells its poller why", async () => {
    const { hub, watchers, raise } = hubWith();
    expect(await hub.poll({ listener: 'l1', bucket: 'photos', waitMs: 0 })).toEqual({ messages: [] });
    for (let index = 0; index <= limits.eventListenRelayEvents; index += 1) raise(`k${index}`);
    expect(watchers.size).toBe(0);
    let received = 0;
    let cutOff: string | undefined;
    while (cutOff === undefined) {
      const answer = await hub.poll({ listener: 'l1', bucket: 'photos', waitMs: 0 });
      expect(answer.messages.length).toBeLessThanOrEqual(limits.eventListenPollBatch);
      received += answer.messages.length;
      cutOff = answer.cutOff;
    }
    expect(received).toBe(limits.eventListenRelayEvents);
    expect(cutOff).toContain(`${limits.eventListenRelayEvents} events`);
    expect(hub.stats()).toEqual({ active: 0, cutOff: 1 });
  });

  it('a subscription waits for a first event, is forgotten after its lease, and ends at once on stop', async () => {
    const { hub, watchers, timers, raise } = hubWith();
    await hub.poll({ listener: 'l1', bucket: 'photos', events: ['s3:ObjectCreated:*'], waitMs: 0 });
    const waiting = hub.poll({ listener: 'l1', bucket: 'photos', waitMs: 5_000 });
    raise('late.jpg');
    expect((await waiting).messages.map((message) => message.Key)).toEqual(['photos/late.jpg']);
    expect(watchers.size).toBe(1);
    timers.advance(limits.eventListenLeaseMs);
    expect(watchers.size).toBe(0);
    await hub.poll({ listener: 'l2', bucket: 'photos', waitMs: 0 });
    expect(hub.stats().active).toBe(1);
    await hub.poll({ listener: 'l2', bucket: 'photos', waitMs: 0, stop: true });
    expect(hub.stats()).toEqual({ active: 0, cutOff: 0 });
  });

  it('follows its peers: their events reach the stream, and a stop is sent to each when it closes', async () => {
    const polls: { waitMs: number; stop?: boolean }[] = [];
    let handOut: EventMessage[] = [{ EventName: 's3:ObjectCreated:Put', Key: 'photos/remote.jpg', Records: [{}] } as unknown as EventMessage];
    const { hub } = hubWith({
      peers: [{
        name: 'peer:9000',
        poll: async (request) => {
          polls.push({ waitMs: request.waitMs, ...(request.stop ? { stop: true } : {}) });
          if (request.waitMs > 0) await new Promise((resolve) => setTimeout(resolve, 5));
          const messages = handOut;
          handOut = [];
          return { messages };
        },
      }],
    });
    const stream = await hub.open({ bucket: 'photos' });
    const lines: string[] = [];
    for await (const chunk of stream) {
      lines.push(...chunk.toString().split('\n').filter((line: string) => line !== ''));
      if (lines.length >= 2) break;
    }
    expect(lines.map((line) => Object.keys(JSON.parse(line))[0])).toEqual(expect.arrayContaining(['EventName', 'Watching']));
    expect(polls[0]).toEqual({ waitMs: 0 });
    expect(polls.some((poll) => poll.stop)).toBe(true);
  });

  it('refuses an unknown event name and a missing bucket', async () => {
    expect(() => listenedEvents(['s3:ObjectCreated:Nope'])).toThrow(/s3:ObjectCreated:Nope/);
    expect(listenedEvents(['s3:ObjectRemoved:*'])).toEqual(['ObjectRemoved:Delete', 'ObjectRemoved:DeleteMarkerCreated']);
    const { hub } = hubWith();
    await expect(hub.open({ bucket: 'nope' })).rejects.toMatchObject({ code: 'NoSuchBucket' });
  });
});
