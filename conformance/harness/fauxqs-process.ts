/**
 * fauxqs (an SNS/SQS/S3 emulator from the npm registry) in a child process of its own, for
 * comparing deployments like s3rver (s3rver-process.ts). It keeps objects in memory and accepts
 * any credentials. Not a dependency of svc: `npm install fauxqs` (or point SVC_FAUXQS_MODULE at
 * its dist/app.js) to compare against it; `fauxqsUnavailable()` says why it cannot run otherwise.
 *
 * Run directly, it serves: `node --import tsx conformance/harness/fauxqs-process.ts <port>`.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startChildServer, type ChildServer } from './child-server.js';

export const fauxqsCredentials = { accessKey: 'fauxqs', secretKey: 'fauxqs-secret' };

function moduleUrl(): string {
  const path = process.env.SVC_FAUXQS_MODULE;
  return path ? pathToFileURL(path).href : 'fauxqs';
}

/** Undefined when fauxqs can be loaded, otherwise why not; under CI (CI=true) its absence is a failure. */
export async function fauxqsUnavailable(): Promise<string | undefined> {
  try {
    await import(moduleUrl());
    return undefined;
  } catch (error) {
    const reason = `fauxqs is not installed (npm install fauxqs, or SVC_FAUXQS_MODULE=<path>/dist/app.js): ${(error as Error).message.split('\n')[0]}`;
    if (process.env.CI) throw new Error(`the fauxqs comparison requires fauxqs: ${reason}`);
    return reason;
  }
}

export type FauxqsProcess = ChildServer;

export async function startFauxqs(): Promise<FauxqsProcess> {
  return startChildServer('fauxqs', fileURLToPath(import.meta.url));
}

async function serve(port: number): Promise<void> {
  process.on('uncaughtException', (error) => console.error(`fauxqs uncaught: ${error.message}`));
  const { startFauxqs: start } = (await import(moduleUrl())) as { startFauxqs(options: { port: number; logger: boolean }): Promise<unknown> };
  await start({ port, logger: false });
  console.log('fauxqs listening');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await serve(Number(process.argv[2]));
