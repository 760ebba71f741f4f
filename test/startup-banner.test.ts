/**
 * What a person sees in a terminal: run under `script` (a pseudo-terminal), the server prints
 * the start-up banner (S3 and console URLs, the credentials, the layout, what to try next) and
 * pretty log lines; piped, or with SVC_OBS_LOG_FORMAT=json, the output stays JSON lines and no
 * banner. Request ids appear in the request log lines and in the error bodies.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, repoRoot, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { missingTool } from './helpers/external-tools.js';
import { developmentAccessKey, developmentSecretKey } from '../src/cluster/server-config.js';
import { waitFor } from './helpers/poll.js';

const noScript = missingTool('script', 'util-linux');
if (noScript) console.warn(`skipping the terminal banner test: ${noScript}`);

const stripAnsi = (text: string) => text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

interface TerminalRun {
  child: ChildProcess;
  output(): string;
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  interrupt(): Promise<void>;
}

/** The server in a pseudo-terminal (`script -qfec`), as someone typing the command would run it. */
async function startInTerminal(drives: string, env: Record<string, string>): Promise<TerminalRun & { port: number; consolePort: number }> {
  const [port, consolePort] = [await freePort('127.0.0.1'), await freePort('127.0.0.1')];
  const command = ['exec', process.execPath, '--import', 'tsx', 'src/cli/svc.ts', 'server', drives].map(quote).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', TERM: 'xterm', SVC_ADDRESS: `127.0.0.1:${port}`, SVC_CONSOLE_ADDRESS: `127.0.0.1:${consolePort}`, SVC_DRIVE_BACKEND: 'memfs', SVC_CODING_THREADS: '0', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    child,
    port,
    consolePort,
    output: () => stripAnsi(output),
    async waitFor(text, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!stripAnsi(output).includes(text)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no '${text}' in the terminal:\n${stripAnsi(output)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async interrupt() {
      if (child.exitCode === null) child.stdin!.write('\x03');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

describe.skipIf(noScript !== undefined)('on a terminal', () => {
  let run: (TerminalRun & { port: number; consolePort: number }) | undefined;
  let home: string | undefined;

  afterEach(async () => {
    await run?.interrupt();
    if (home) await rm(home, { recursive: true, force: true });
    run = undefined;
  });

  it('prints the banner with the development credentials, and pretty log lines', async () => {
    home = await mkdtemp(join(tmpdir(), 'svc-banner-'));
    run = await startInTerminal(join(home, 'drive{1...4}'), {});
    await run.waitFor('rc admin prometheus generate');
    const output = run.output();
    const s3Url = `http://127.0.0.1:${run.port}`;
    expect(output).toContain(`S3 API      ${s3Url}`);
    expect(output).toContain(`Console     http://127.0.0.1:${run.consolePort}/svc/console/`);
    expect(output).toContain(`Access key  ${developmentAccessKey}`);
    expect(output).toContain(`Secret key  ${developmentSecretKey}   (the development default`);
    expect(output).toMatch(/pool 0: .*drive\{1\.\.\.4\}/);
    expect(output).toContain('4 drive(s) in 1 set(s) of 4, STANDARD EC:2 (K=2), RRS EC:1');
    expect(output).toContain(`rc alias set local ${s3Url} ${developmentAccessKey} ${developmentSecretKey}`);
    expect(output).toContain(`aws --endpoint-url ${s3Url} s3 ls`);
    // Pretty lines: a level word and the message, no JSON objects.
    expect(output).toMatch(/INFO.*storage ready/);
    expect(output).not.toMatch(/^\{"level"/m);
  }, 60_000);

  it('shows the access key but not a secret that is not the development default', async () => {
    home = await mkdtemp(join(tmpdir(), 'svc-banner-'));
    run = await startInTerminal(join(home, 'drive{1...4}'), { SVC_ACCESS_KEY: testCredentials.accessKeyId, SVC_SECRET_KEY: testCredentials.secretAccessKey });
    await run.waitFor('rc admin prometheus generate');
    expect(run.output()).toContain(`Access key  ${testCredentials.accessKeyId}`);
    expect(run.output()).toContain('Secret key  (from SVC_SECRET_KEY, not shown)');
    expect(run.output()).not.toContain(testCredentials.secretAccessKey);
  }, 60_000);

  it('with SVC_OBS_LOG_FORMAT=json writes JSON lines and no banner', async () => {
    home = await mkdtemp(join(tmpdir(), 'svc-banner-'));
    run = await startInTerminal(join(home, 'drive{1...4}'), { SVC_OBS_LOG_FORMAT: 'json' });
    await run.waitFor('"msg":"listening"');
    const lines = await waitFor('more than three whole lines of output', () => {
      const output = run!.output();
      const written = output.slice(0, output.lastIndexOf('\n') + 1).split(/\r?\n/).filter((line) => line.trim() !== '');
      return written.length > 3 && written;
    });
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(run.output()).not.toContain('S3 API');
  }, 60_000);
});

describe('piped', () => {
  let server: SvcProcess | undefined;
  let home: string | undefined;

  afterEach(async () => {
    await server?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('writes JSON lines only, and a request id reaches the log line and the error body', async () => {
    home = await mkdtemp(join(tmpdir(), 'svc-piped-'));
    server = await startSvc({ args: [join(home, 'drive{1...4}')], env: { SVC_DRIVE_BACKEND: 'memfs', SVC_OBS_LOGGER_LEVEL: 'debug', SVC_CODING_THREADS: '0' } });
    const response = await fetch(`${server.url}/no-such-bucket/key`);
    const body = await response.text();
    const requestId = response.headers.get('x-amz-request-id')!;
    expect(body).toContain(`<RequestId>${requestId}</RequestId>`);
    const deadline = Date.now() + 5_000;
    while (!server.logs().includes(requestId) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const lines = server.logs().split('\n').filter((line) => line !== '');
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed.find((line) => line.requestId === requestId)).toMatchObject({ msg: 'S3 request', api: 'GetObject', status: 403 });
    expect(server.logs()).not.toContain('S3 API ');
  }, 60_000);
});
