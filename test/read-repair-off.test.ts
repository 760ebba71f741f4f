/**
 * SVC_HEAL_MRF=off: a read that meets a corrupt shard still answers the right bytes, but the
 * object is counted as not queued instead of repaired in the background, so the damage stays
 * until a heal sequence repairs it (what the erasure tutorial relies on). The setting takes `on`
 * and `off` only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { readServerConfig } from '../src/cluster/server-config.js';
import { decodeXlMeta } from '../src/format/xl-meta.js';
import { admin } from './helpers/admin-client.js';
import { codeOf } from './helpers/codes.js';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';

describe('SVC_HEAL_MRF', () => {
  it('is on by default, takes on and off in any case, and refuses anything else by name', () => {
    const config = (value?: string) => readServerConfig(['/srv/d{1...4}'], value === undefined ? {} : { SVC_HEAL_MRF: value });
    expect(config().readRepair).toBe(true);
    expect(config('OFF').readRepair).toBe(false);
    expect(config('on').readRepair).toBe(true);
    expect(codeOf(() => config('no'))).toBe('InvalidConfiguration');
    expect(() => config('no')).toThrow('SVC_HEAL_MRF="no" is not one of on, off');
  });
});

describe('read-repair off', () => {
  let root: string;
  let server: SvcProcess;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-mrf-off-'));
    server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_CONSOLE_ENABLE: 'false', SVC_HEAL_MRF: 'off' } });
  }, 60_000);
  afterAll(async () => {
    await server?.kill();
    await rm(root, { recursive: true, force: true });
  });

  const mrf = async () => (await admin(server.url, 'POST', '/svc/admin/v3/background-heal/status')).body.mrf as Record<string, number>;

  it('leaves a corrupt shard a read met until a heal sequence repairs it', async () => {
    expect(server.logs()).toContain('read-repair is off');
    const s3 = s3ClientFor(server.url);
    await s3.send(new CreateBucketCommand({ Bucket: 'lab' }));
    const body = Buffer.alloc(1024 * 1024 + 17, 'lab');
    await s3.send(new PutObjectCommand({ Bucket: 'lab', Key: 'object.bin', Body: body }));
    // Corrupt the shard every read uses (data shard 1).
    let slot = 1;
    while (decodeXlMeta(await readFile(join(root, `d${slot}`, 'lab', 'object.bin', 'xl.meta'))).versions[0]!.erasure!.index !== 1) slot += 1;
    const directory = join(root, `d${slot}`, 'lab', 'object.bin');
    const part = join(directory, (await readdir(directory)).find((name) => name !== 'xl.meta')!, 'part.1');
    const corrupt = await readFile(part);
    corrupt[100] = corrupt[100]! ^ 0xff;
    await writeFile(part, corrupt);

    const read = await s3.send(new GetObjectCommand({ Bucket: 'lab', Key: 'object.bin' }));
    expect(Buffer.from(await read.Body!.transformToByteArray()).equals(body)).toBe(true);
    // The read reported the object: counted, never queued, never repaired.
    await expect.poll(async () => (await mrf()).notQueued, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    expect(await mrf()).toMatchObject({ queued: 0, awaitingDrives: 0, processed: 0, failed: 0 });
    expect((await readFile(part)).equals(corrupt)).toBe(true);

    // A heal sequence still repairs it.
    const started = await admin(server.url, 'POST', '/svc/admin/v3/heal/lab/object.bin', '', { body: JSON.stringify({ scanMode: 'deep' }) });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    let status = started.body;
    for (const deadline = Date.now() + 60_000; status.status === 'running' && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await admin(server.url, 'POST', '/svc/admin/v3/heal/lab/object.bin', `clientToken=${started.body.clientToken}`)).body;
    }
    expect(status.items?.[0]?.outcome, JSON.stringify(status)).toBe('healed');
    expect((await readFile(part)).equals(corrupt)).toBe(false);
  }, 60_000);
});
