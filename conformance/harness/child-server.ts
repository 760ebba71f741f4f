/**
 * Another S3 server for comparison, run in a child process of its own (its crashes and hangs stay
 * its own and show as failed checks, not as a crashed test runner): the child runs `script` with
 * the port and `args`, and prints `<name> listening` once it serves on 127.0.0.1:<port>.
 */
import { spawn } from 'node:child_process';
import { freePort, repoRoot } from './server-process.js';

export interface ChildServer {
  url: string;
  output(): string;
  stop(): Promise<void>;
}

export async function startChildServer(name: string, script: string, args: string[] = []): Promise<ChildServer> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--no-warnings', '--import', 'tsx', script, String(port), ...args], { cwd: repoRoot, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let attempt = 0; !output.includes(`${name} listening`); attempt += 1) {
    if (attempt > 300 || child.exitCode !== null) throw new Error(`${name} did not start:\n${output}`);
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
