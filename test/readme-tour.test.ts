/**
 * The README's tour exactly as a newcomer types it: a fresh clone, the README's set-up command
 * (`npm install && npm start`, with the clone's node_modules linked to this checkout's and its
 * build copied in, which is what `npm install` would make), then every `sh` block of the tour in
 * the clone's directory, with no wrapper on PATH and no address rewritten: `./rc` included.
 * It uses :9000 and :9001 as the README does, like test/npm-start.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { missingTool } from './helpers/external-tools.js';
import { fencedBlocks, outputMatches } from './helpers/markdown.js';
import { repoRoot } from './helpers/server-process.js';
import { waitForOk } from './helpers/wait-url.js';

const run = promisify(execFile);
const skipReason = missingTool('aws', 'awscli') ?? missingTool('git') ?? (existsSync(join(repoRoot, 'dist/src/cli/svc.js')) ? undefined : 'dist/ is not built (npm install builds it)');
if (skipReason) console.warn(`README tour skipped: ${skipReason}`);

/** The tour's blocks in order (`sh runnable`), each with the output block that follows it, if any. */
async function tourBlocks(): Promise<{ body: string; line: number; expected?: string }[]> {
  const blocks = fencedBlocks(await readFile(join(repoRoot, 'README.md'), 'utf8'));
  return blocks.flatMap((block, index) => (block.info === 'sh runnable' ? [{ body: block.body, line: block.line, ...(blocks[index + 1]?.info === 'output' ? { expected: blocks[index + 1]!.body } : {}) }] : []));
}

describe.skipIf(skipReason !== undefined)("the README's tour in a fresh clone", () => {
  let clone: string;
  let home: string;
  let server: ChildProcess | undefined;
  let logs = '';
  // A newcomer's environment: node and the AWS CLI on PATH, nothing of svc's.
  const env = (): NodeJS.ProcessEnv => ({ PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, HOME: home, LANG: 'C.UTF-8', TERM: 'dumb' });

  beforeAll(async () => {
    clone = await mkdtemp(join(tmpdir(), 'svc-readme-tour-'));
    home = join(clone, '.home');
    await run('git', ['clone', '--quiet', repoRoot, join(clone, 'svc')]);
    clone = join(clone, 'svc');
    await symlink(join(repoRoot, 'node_modules'), join(clone, 'node_modules'));
    await cp(join(repoRoot, 'dist'), join(clone, 'dist'), { recursive: true });
    await mkdir(home, { recursive: true });
    // The README's set-up line; `npm install` finds everything in place.
    const setUp = (await readFile(join(clone, 'README.md'), 'utf8')).match(/^npm install && npm start\b/m);
    expect(setUp).not.toBeNull();
    server = spawn('npm', ['start'], { cwd: clone, env: env(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    server.stdout!.on('data', (chunk: Buffer) => (logs += chunk.toString()));
    server.stderr!.on('data', (chunk: Buffer) => (logs += chunk.toString()));
    expect(await waitForOk('http://127.0.0.1:9000/health/ready', { exited: () => server!.exitCode !== null }), logs).toBe(true);
  }, 120_000);

  afterAll(async () => {
    if (server?.pid && server.exitCode === null) {
      process.kill(-server.pid, 'SIGTERM');
      await new Promise((resolve) => server!.once('exit', resolve));
    }
    if (clone) await rm(dirname(clone), { recursive: true, force: true });
  });

  it('runs every block of the tour as written, rc as ./rc', async () => {
    const blocks = await tourBlocks();
    expect(blocks.some((block) => /^\.\/rc /m.test(block.body))).toBe(true);
    for (const block of blocks) {
      const result = await run('bash', ['-c', `set -e -o pipefail\nexec 2>&1\n${block.body}`], { cwd: clone, env: env(), maxBuffer: 16 * 1024 * 1024 }).then(
        ({ stdout }) => ({ code: 0, output: stdout }),
        (error: { code?: number; stdout?: string }) => ({ code: error.code ?? 1, output: error.stdout ?? '' }),
      );
      const where = `README.md:${block.line}\n--- block\n${block.body}\n--- output (exit ${result.code})\n${result.output}\n--- server\n${logs.slice(-2000)}`;
      expect(result.code, where).toBe(0);
      if (block.expected !== undefined) expect(outputMatches(block.expected, result.output), where).toBe(true);
    }
  }, 180_000);
});
