import { describe, expect, it } from 'vitest';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './helpers/server-process.js';
import { missingTool } from './helpers/external-tools.js';
import { waitForOk } from './helpers/wait-url.js';

const skipReason = missingTool('aws', 'awscli') ?? (existsSync(join(repoRoot, 'dist/src/cli/svc.js')) ? undefined : 'dist/ is not built (npm install builds it)');
if (skipReason) console.warn(`skipping npm start round trip: ${skipReason}`);

describe.skipIf(skipReason !== undefined)('npm start', () => {
  it('serves S3 on :9000 within seconds, is ready, aws s3 cp round-trips a file, and the console on :9001 signs in and lists it', async () => {
    const root = await mkdtemp(join(tmpdir(), 'svc-start-'));
    const child = spawn('npm', ['start'], {
      cwd: repoRoot,
      env: { ...process.env, SVC_DRIVE_ROOT: root, SVC_ACCESS_KEY: 'startadmin', SVC_SECRET_KEY: 'startadmin-secret', SVC_ADDRESS: ':9000', SVC_CONSOLE_ADDRESS: ':9001' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let logs = '';
    child.stdout!.on('data', (chunk: Buffer) => (logs += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (logs += chunk.toString()));
    try {
      expect(await waitForOk('http://127.0.0.1:9000/health/ready', { timeoutMs: 15_000 }), logs).toBe(true);
      const source = join(root, 'source.bin');
      const target = join(root, 'target.bin');
      await writeFile(source, Buffer.alloc(3 * 1024 * 1024 + 17, 'svc'));
      const env = { ...process.env, AWS_ACCESS_KEY_ID: 'startadmin', AWS_SECRET_ACCESS_KEY: 'startadmin-secret', AWS_DEFAULT_REGION: 'us-east-1', AWS_EC2_METADATA_DISABLED: 'true' };
      const aws = (...args: string[]): string => execFileSync('aws', ['--endpoint-url', 'http://127.0.0.1:9000', ...args], { env, encoding: 'utf8' });
      aws('s3', 'mb', 's3://roundtrip');
      aws('s3', 'cp', source, 's3://roundtrip/dir/file.bin');
      aws('s3', 'cp', 's3://roundtrip/dir/file.bin', target);
      expect((await readFile(target)).equals(await readFile(source))).toBe(true);
      expect(aws('s3', 'ls', 's3://roundtrip/dir/')).toContain('file.bin');
      // The console on :9001: / leads to the app, whose sign-in takes the root credentials and lists the bucket.
      const root9001 = await fetch('http://127.0.0.1:9001/', { redirect: 'manual' });
      expect(root9001.headers.get('location')).toBe('/svc/console/');
      expect(await (await fetch('http://127.0.0.1:9001/svc/console/')).text()).toContain('assets/app.js');
      const signIn = await fetch('http://127.0.0.1:9001/svc/console/api/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ accessKey: 'startadmin', secretKey: 'startadmin-secret' }) });
      expect(signIn.status).toBe(200);
      const cookie = signIn.headers.getSetCookie()[0]!.split(';')[0]!;
      const buckets = (await (await fetch('http://127.0.0.1:9001/svc/console/api/buckets', { headers: { cookie } })).json()) as { buckets: { name: string }[] };
      expect(buckets.buckets.map((bucket) => bucket.name)).toEqual(['roundtrip']);
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      await rm(root, { recursive: true, force: true });
    }
  });
});
