/** What a newcomer meets first: content types from rc cp, a taken address, an old Node.js. */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contentTypeOf } from '../src/cli/rc/content-types.js';
import { toolPath } from './helpers/external-tools.js';
import { repoRoot } from './helpers/server-process.js';

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
