/**
 * What a newcomer meets first: content types from rc cp, refusals that name what is valid, the
 * capacity of directories on one disk, the help's words, the checkout's `svc` and `rc` scripts,
 * a taken address, an old Node.js.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp, rm, statfs, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { contentTypeOf } from '../src/cli/rc/content-types.js';
import { admin } from './helpers/admin-client.js';
import { toolPath } from './helpers/external-tools.js';
import { rcIn } from './helpers/rc-process.js';
import { repoRoot, s3ClientFor, startSvc, testCredentials, waitReady, type SvcProcess } from './helpers/server-process.js';

describe('rc cp content types', () => {
  it('guesses from the extension, case aside, and falls back to octet-stream', () => {
    expect(contentTypeOf('./cat.jpg')).toBe('image/jpeg');
    expect(contentTypeOf('/x/Photo.JPEG')).toBe('image/jpeg');
    expect(contentTypeOf('notes.txt')).toBe('text/plain');
    expect(contentTypeOf('data.json')).toBe('application/json');
    expect(contentTypeOf('archive.tar')).toBe('application/x-tar');
    expect(contentTypeOf('README')).toBe('application/octet-stream');
  });
});

describe('a first server on four directories of one disk', () => {
  let root: string;
  let server: SvcProcess;
  const { rc, ok } = rcIn(() => root);
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-newcomer-'));
    server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_CONSOLE_ENABLE: 'false' }, waitReady: false });
    // A machine busy with other work may take longer than the usual 30 s to start it.
    await waitReady(server, 120_000);
    await ok('alias', 'set', 'local', server.url, testCredentials.accessKeyId, testCredentials.secretAccessKey);
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('rc cp stores a .jpg as image/jpeg', async () => {
    await writeFile(join(root, 'cat.jpg'), Buffer.alloc(3000, 1));
    await ok('mb', 'local/photos');
    await ok('cp', join(root, 'cat.jpg'), 'local/photos/cat.jpg');
    const head = await s3ClientFor(server.url).send(new HeadObjectCommand({ Bucket: 'photos', Key: 'cat.jpg' }));
    expect(head.ContentType).toBe('image/jpeg');
  }, 30_000);

  it('a node or drive rc admin simulate does not know is refused with the valid names', async () => {
    const node = await rc('admin', 'simulate', 'local', '--fail-node', '127.0.0.1:9000');
    expect(node.code).not.toBe(0);
    expect(node.stderr).toContain("no node of this deployment is '127.0.0.1:9000'; its nodes are: local");
    const drive = await rc('admin', 'simulate', 'local', '--fail-drive', './data/drive1');
    expect(drive.code).not.toBe(0);
    expect(drive.stderr).toContain(`its drives are: ${[1, 2, 3, 4].map((index) => join(root, `d${index}`)).join(', ')}`);
  }, 30_000);

  it('counts the capacity of one file system once, however many of its directories are drives', async () => {
    const disk = await statfs(root);
    const answer = await admin(server.url, 'GET', '/svc/admin/v3/pools/list');
    expect(answer.status).toBe(200);
    const pool = answer.body.pools[0];
    // Other tests write to the same disk meanwhile: its size holds still, its free space does not.
    expect(pool.totalBytes).toBe(disk.blocks * disk.bsize);
    const drives = (await admin(server.url, 'GET', '/svc/admin/v3/pools/status', 'pool=0&by-id=true')).body.sets[0].drives as { totalBytes: number }[];
    expect(drives.map((slot) => slot.totalBytes)).toEqual([1, 2, 3, 4].map(() => disk.blocks * disk.bsize));
  }, 30_000);

  it("rc's help says what each rebalance command does", async () => {
    const help = await ok('--help');
    expect(help).toContain("show the rebalance's progress");
    expect(help).not.toMatch(/\bstatus the rebalance\b/);
  }, 30_000);
});

describe("the checkout's svc and rc scripts", () => {
  it('run the build from any directory once the checkout is on PATH, with nothing installed', () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'svc-scripts-'));
    try {
      const env = { PATH: `${repoRoot}:${dirname(process.execPath)}:/usr/bin:/bin`, HOME: elsewhere };
      expect(execFileSync('svc', ['plan', 'lab/drive{1...6}'], { cwd: elsewhere, env, encoding: 'utf8' })).toContain('STANDARD EC:3 (K=3, M=3)');
      expect(execFileSync('rc', ['--help'], { cwd: elsewhere, env, encoding: 'utf8' })).toContain('rc alias set');
      expect(execFileSync(join(repoRoot, 'svc'), ['--help'], { cwd: elsewhere, env, encoding: 'utf8' })).toContain('svc server <endpoint-pattern>');
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});

describe('svc server on a taken address', () => {
  it('says the address is in use and exits 1', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const root = mkdtempSync(join(tmpdir(), 'svc-taken-'));
    try {
      const result = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
        // Asynchronous, so that the blocker keeps answering while the server tries its address.
        void import('node:child_process').then(({ execFile }) =>
          execFile(process.execPath, [join(repoRoot, 'dist/src/cli/svc.js'), 'server', join(root, 'd{1...4}')], { env: { ...process.env, SVC_ADDRESS: `127.0.0.1:${port}`, SVC_CONSOLE_ADDRESS: '127.0.0.1:0' }, timeout: 60_000 }, (error, _stdout, stderr) =>
            resolve({ status: error ? ((error as { code?: number }).code ?? null) : 0, stderr }),
          ),
        );
      });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`svc: AddressInUse: 127.0.0.1:${port} is already in use`);
    } finally {
      blocker.close();
      rmSync(root, { recursive: true, force: true });
    }
  }, 90_000);
});

const oldNode = ['/usr/bin/node', '/usr/local/bin/node'].find((path) => {
  const version = spawnSync(path, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '';
  return /^v(1\d|20|21)\./.test(version);
});
describe.skipIf(oldNode === undefined || toolPath('node') === undefined)('an older Node.js', () => {
  it('is refused at start with the version it needs', () => {
    for (const script of ['svc.js', 'rc.js']) {
      const result = spawnSync(oldNode!, [join(repoRoot, 'dist/src/cli', script), '--help'], { encoding: 'utf8' });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('svc: UnsupportedRuntime: Node.js 22 or newer is required');
    }
  });
});
