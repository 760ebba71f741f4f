/**
 * s3rver (an S3 server for tests, from the npm registry) in a child process of its own, for
 * comparing deployments: its crashes and hangs stay its own and show as failed checks, not as a
 * crashed test runner. An uncaught error in s3rver (it throws on some file-system errors) is logged
 * and the server keeps answering other requests. Credentials are s3rver's fixed S3RVER/S3RVER.
 *
 * Run directly, it serves: `node --import tsx conformance/harness/s3rver-process.ts <port> <dir>`.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort, repoRoot } from './server-process.js';

export const s3rverCredentials = { accessKey: 'S3RVER', secretKey: 'S3RVER' };

export interface S3rverProcess {
  url: string;
  output(): string;
  stop(): Promise<void>;
}

export async function startS3rver(directory: string): Promise<S3rverProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), String(port), directory], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let attempt = 0; !output.includes('s3rver listening'); attempt += 1) {
    if (attempt > 200 || child.exitCode !== null) throw new Error(`s3rver did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function serve(port: number, directory: string): Promise<void> {
  process.on('uncaughtException', (error) => console.error(`s3rver uncaught: ${error.message}`));
  const { default: S3rver } = await import('s3rver');
  await new S3rver({ port, address: '127.0.0.1', silent: true, directory }).run();
  console.log('s3rver listening');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await serve(Number(process.argv[2]), process.argv[3]!);
