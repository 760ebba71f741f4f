/**
 * s3rver (an S3 server for tests, from the npm registry) in a child process of its own, for
 * comparing deployments: its crashes and hangs stay its own and show as failed checks, not as a
 * crashed test runner. An uncaught error in s3rver (it throws on some file-system errors) is logged
 * and the server keeps answering other requests. Credentials are s3rver's fixed S3RVER/S3RVER.
 *
 * Run directly, it serves: `node --import tsx conformance/harness/s3rver-process.ts <port> <dir>`.
 */
import { fileURLToPath } from 'node:url';
import { startChildServer, type ChildServer } from './child-server.js';

export const s3rverCredentials = { accessKey: 'S3RVER', secretKey: 'S3RVER' };

export type S3rverProcess = ChildServer;

export async function startS3rver(directory: string): Promise<S3rverProcess> {
  return startChildServer('s3rver', fileURLToPath(import.meta.url), [directory]);
}

async function serve(port: number, directory: string): Promise<void> {
  process.on('uncaughtException', (error) => console.error(`s3rver uncaught: ${error.message}`));
  const { default: S3rver } = await import('s3rver');
  await new S3rver({ port, address: '127.0.0.1', silent: true, directory }).run();
  console.log('s3rver listening');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await serve(Number(process.argv[2]), process.argv[3]!);
