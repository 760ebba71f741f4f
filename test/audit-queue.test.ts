/**
 * The audit log's targets on their own (src/ops/audit.ts, src/ops/audit-queue.ts), against a
 * plain node:http receiver on 127.0.0.1 and manual timers: entries arrive in order in batches of
 * the configured size with the bearer token; a failing receiver is retried after 100, 200, 400,
 * 400 ms (capped) of the injected timers and nothing is lost; a full queue drops its oldest
 * entries, counts them and warns once per interval; a new log on the same directory delivers what
 * an earlier one left queued; fields that are not part of an entry (secrets) never reach the
 * file, the webhook or the console's ring; the file is reopened under its name.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog, type AuditEntry, type AuditTargets } from '../src/ops/audit.js';
import type { Timers } from '../src/util/clock.js';
import { freePort } from './helpers/server-process.js';
import { waitFor } from './helpers/poll.js';

const fsyncMs = 7_777;
const warningMs = 60_000;

/** Timers that fire only when the test says so; every delay asked for is remembered. */
class ManualTimers implements Timers {
  readonly asked: number[] = [];
  private pending = new Map<number, { delayMs: number; callback: () => void }>();
  private next = 1;
  setTimeout(callback: () => void, delayMs: number): unknown {
    this.asked.push(delayMs);
    const handle = this.next++;
    this.pending.set(handle, { delayMs, callback });
    return handle;
  }
  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  /** Fires every pending timer of this delay; how many fired. */
  fire(delayMs: number): number {
    const due = [...this.pending].filter(([, timer]) => timer.delayMs === delayMs);
    for (const [handle, timer] of due) {
      this.pending.delete(handle);
      timer.callback();
    }
    return due.length;
  }
  has(delayMs: number): boolean {
    return [...this.pending.values()].some((timer) => timer.delayMs === delayMs);
  }
}

interface Receiver {
  url: string;
  batches: string[][];
  headers: IncomingHttpHeaders[];
  /** Status to answer; 200 by default. */
  status: number;
  close(): Promise<void>;
}

async function startReceiver(port = 0): Promise<Receiver> {
  const receiver = { batches: [] as string[][], headers: [] as IncomingHttpHeaders[], status: 200 } as Receiver;
  const server: Server = createServer(async (request, response) => {
    let body = '';
    for await (const chunk of request) body += chunk;
    receiver.headers.push(request.headers);
    if (receiver.status === 200) receiver.batches.push(body.split('\n').filter((line) => line !== ''));
    response.writeHead(receiver.status).end();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  receiver.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}/audit`;
  receiver.close = () => new Promise((resolve) => server.close(() => resolve()));
  return receiver;
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  await waitFor(what, check, { timeoutMs, intervalMs: 10 });
}

function entry(index: number, extra: Record<string, unknown> = {}): AuditEntry {
  return {
    version: '1', time: new Date(1_700_000_000_000 + index).toISOString(), node: '127.0.0.1:9000', requestId: `R${String(index).padStart(4, '0')}`, surface: 's3', api: 'PutObject',
    principal: { kind: 'user', accessKey: 'alice' }, actions: ['s3:PutObject'], resource: `photos/${index}`, outcome: 'allowed', httpStatus: 200, sourceIp: '127.0.0.1', userAgent: 'test', durationMs: 1,
    ...extra,
  } as AuditEntry;
}

const ids = (batches: string[][]) => batches.flat().map((line) => JSON.parse(line).requestId as string);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => `R${String(from + index).padStart(4, '0')}`);

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openLog(targets: AuditTargets, timers = new ManualTimers(), warnings: Record<string, unknown>[] = []): Promise<{ log: AuditLog; timers: ManualTimers; warnings: Record<string, unknown>[] }> {
  const log = await AuditLog.open({
    node: '127.0.0.1:9000', clock: { nowMs: () => 1_700_000_000_000 }, timers, targets,
    logger: { warn: (fields) => warnings.push(fields) },
    tuning: { fsyncIntervalMs: fsyncMs, retryBaseMs: 100, retryMaxMs: 400, dropWarningIntervalMs: warningMs },
  });
  cleanups.push(() => log.close());
  return { log, timers, warnings };
}

async function scratch(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'svc-audit-'));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

describe('the audit webhook queue', () => {
  it('delivers in order, in batches of the configured size, with the bearer token', async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const queueDirectory = await scratch();
    const { log } = await openLog({ webhook: { endpoint: receiver.url, authToken: 'hook-token', queueDirectory, queueLimitEntries: 100, batchSize: 3 } });
    for (let index = 1; index <= 7; index += 1) log.record(entry(index));
    await until(() => receiver.batches.flat().length === 7, 'seven entries');
    expect(ids(receiver.batches)).toEqual(range(1, 7));
    expect(receiver.batches.map((batch) => batch.length)).toEqual([3, 3, 1]);
    // Entries that arrive while segments are being written and sent: none lost, none reordered, no batch too large.
    for (let index = 8; index <= 60; index += 1) {
      log.record(entry(index));
      if (index % 4 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await until(() => receiver.batches.flat().length === 60, 'sixty entries');
    expect(ids(receiver.batches)).toEqual(range(1, 60));
    expect(Math.max(...receiver.batches.map((batch) => batch.length))).toBe(3);
    expect(receiver.headers.every((headers) => headers.authorization === 'Bearer hook-token' && headers['content-type'] === 'application/x-ndjson')).toBe(true);
    await until(async () => (await readdir(queueDirectory)).length === 0, 'delivered segments removed');
    expect(log.stats()).toMatchObject({ recorded: 60, queued: 0, delivered: 60, dropped: 0 });
  });

  it('retries a failing receiver with capped exponential backoff on the injected timers, losing nothing', async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    receiver.status = 500;
    const { log, timers } = await openLog({ webhook: { endpoint: receiver.url, queueDirectory: await scratch(), queueLimitEntries: 100, batchSize: 10 } });
    log.record(entry(1));
    log.record(entry(2));
    const retries: number[] = [];
    for (const delayMs of [100, 200, 400, 400]) {
      await until(() => timers.has(delayMs), `a retry after ${delayMs} ms`);
      expect(log.stats()).toMatchObject({ queued: 2, delivered: 0, lastError: 'the webhook answered HTTP 500' });
      retries.push(delayMs);
      if (retries.length === 4) receiver.status = 200;
      timers.fire(delayMs);
    }
    await until(() => receiver.batches.length === 1, 'the batch delivered');
    expect(ids(receiver.batches)).toEqual(range(1, 2));
    expect(receiver.headers).toHaveLength(5);
    expect(timers.asked.filter((delayMs) => delayMs !== fsyncMs)).toEqual([100, 200, 400, 400]);
    expect(log.stats()).toEqual({ recorded: 2, webhook: true, queued: 0, delivered: 2, dropped: 0, quarantined: 0 });
  });

  it('full, drops the oldest entries, counts them and warns once per interval; a new log on the directory delivers the rest', async () => {
    const port = await freePort();
    const queueDirectory = await scratch();
    const webhook = { endpoint: `http://127.0.0.1:${port}/audit`, queueDirectory, queueLimitEntries: 6, batchSize: 2 };
    const first = await openLog({ webhook });
    for (let index = 1; index <= 10; index += 1) first.log.record(entry(index));
    expect(first.log.stats()).toMatchObject({ queued: 6, dropped: 4 });
    expect(first.warnings.map((fields) => fields.dropped)).toEqual([2]);
    first.timers.fire(warningMs);
    expect(first.warnings.map((fields) => fields.dropped)).toEqual([2, 2]);
    await until(() => /ECONNREFUSED|fetch failed/.test(first.log.stats().lastError ?? ''), 'a refused connection');
    await first.log.close();

    const receiver = await startReceiver(port);
    cleanups.push(() => receiver.close());
    const second = await openLog({ webhook });
    expect(second.log.stats()).toMatchObject({ queued: 6, dropped: 0 });
    await until(() => receiver.batches.flat().length === 6, 'the queued entries after the restart');
    expect(ids(receiver.batches)).toEqual(range(5, 10));
    expect(second.log.stats()).toMatchObject({ queued: 0, delivered: 6 });
  });

  it('at start drops a torn last line and quarantines a segment it could not have written, delivering the rest', async () => {
    const port = await freePort();
    const queueDirectory = await scratch();
    const webhook = { endpoint: `http://127.0.0.1:${port}/audit`, queueDirectory, queueLimitEntries: 100, batchSize: 3 };
    const first = await openLog({ webhook });
    for (let index = 1; index <= 6; index += 1) first.log.record(entry(index));
    await first.log.close();
    const segments = (await readdir(queueDirectory)).filter((name) => name.startsWith('segment-')).sort();
    expect(segments).toHaveLength(2);
    // A power cut tore the second segment's last line; the first was overwritten by something else.
    const tornPath = join(queueDirectory, segments[1]!);
    const torn = await readFile(tornPath, 'utf8');
    await writeFile(tornPath, torn.slice(0, torn.trimEnd().length - 10));
    await writeFile(join(queueDirectory, segments[0]!), `not json\n${JSON.stringify(entry(1))}\n`);

    const receiver = await startReceiver(port);
    cleanups.push(() => receiver.close());
    const second = await openLog({ webhook });
    expect(second.log.stats()).toMatchObject({ queued: 2, dropped: 1, quarantined: 1 });
    expect(second.warnings.some((fields) => String(fields.reason).includes('line 1 of 2 is not JSON'))).toBe(true);
    await until(() => receiver.batches.flat().length === 2, 'the whole entries of the torn segment');
    expect(ids(receiver.batches)).toEqual(range(4, 5));
    expect(await readdir(join(queueDirectory, 'quarantine'))).toEqual([expect.stringMatching(new RegExp(`^${segments[0]}\\.\\d+$`))]);
    await second.log.close();
    // A quarantined file is never read again.
    const third = await openLog({ webhook });
    expect(third.log.stats()).toMatchObject({ queued: 0, quarantined: 0 });
  });

  it('keeps only the fields of an entry: secrets handed to it reach neither the file, the webhook nor the ring', async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const directory = await scratch();
    const file = join(directory, 'audit.log');
    const { log } = await openLog({ file, webhook: { endpoint: receiver.url, queueDirectory: join(directory, 'queue'), queueLimitEntries: 10, batchSize: 10 } });
    const secrets = { secretKey: 'SECRET-KEY-1', signature: 'SIGNATURE-2', sessionToken: 'SESSION-TOKEN-3', cookie: 'COOKIE-4', authorization: 'AWS4-HMAC-SHA256 SIGNATURE-5' };
    log.record({ ...entry(1, secrets), principal: { kind: 'user', accessKey: 'alice', ...({ secretKey: 'SECRET-KEY-6' } as object) } });
    await until(() => receiver.batches.length === 1, 'the entry delivered');
    await log.close();
    const written = [await readFile(file, 'utf8'), receiver.batches.flat().join('\n'), JSON.stringify(log.recent())];
    for (const text of written) {
      expect(JSON.parse(text.split('\n')[0]!.replace(/^\[|\]$/g, ''))).toMatchObject({ requestId: 'R0001', principal: { kind: 'user', accessKey: 'alice' } });
      for (const secret of ['SECRET-KEY', 'SIGNATURE', 'SESSION-TOKEN', 'COOKIE']) expect(text).not.toContain(secret);
    }
  });

  it('appends to the file, reopens it under its name, and filters the recent entries', async () => {
    const directory = await scratch();
    const file = join(directory, 'audit.log');
    const { log } = await openLog({ file });
    log.record(entry(1));
    log.record(entry(2, { outcome: 'denied', httpStatus: 403, principal: { kind: 'anonymous' } }));
    await log.reopen();
    await rename(file, `${file}.1`);
    await log.reopen();
    log.record(entry(3));
    await log.close();
    expect((await readFile(`${file}.1`, 'utf8')).trim().split('\n').map((line) => JSON.parse(line).requestId)).toEqual(['R0001', 'R0002']);
    expect((await readFile(file, 'utf8')).trim().split('\n').map((line) => JSON.parse(line).requestId)).toEqual(['R0003']);
    expect(log.recent().map((kept) => kept.requestId)).toEqual(['R0003', 'R0002', 'R0001']);
    expect(log.recent({ outcome: 'denied' }).map((kept) => kept.requestId)).toEqual(['R0002']);
    expect(log.recent({ principal: 'anonymous' }).map((kept) => kept.requestId)).toEqual(['R0002']);
    expect(log.recent({ principal: 'alice', limit: 1 }).map((kept) => kept.requestId)).toEqual(['R0003']);
  });
});
