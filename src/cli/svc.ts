#!/usr/bin/env -S node --initial-old-space-size=64
/**
 * `svc server <pattern>...` (or `svc` alone: volumes from SVC_VOLUMES). Exits non-zero with the
 * error's code and message when startup fails; SIGTERM/SIGINT stop it gracefully.
 * `svc healthcheck` probes this node's health URLs (the container health check).
 *
 * File-system calls run on libuv's thread pool, 4 threads unless UV_THREADPOOL_SIZE says
 * otherwise, and a durable write holds a thread for its whole fsync: 32 concurrent small PUTs on 4
 * drives want 128 at once, and 4 threads let the journal commit only 4 at a time. So the pool is
 * sized here (limits.ioThreadsDefault) before anything else loads, as libuv reads the variable
 * when the pool first starts; the rest is imported after.
 */
import './node-version.js';
import { limits } from '../util/limits.js';
import type { RunningServer } from '../main.js';

process.env.UV_THREADPOOL_SIZE ??= String(limits.ioThreadsDefault);

const { startServer } = await import('../main.js');
const { runHealthcheck } = await import('./healthcheck.js');
const { runPlan } = await import('./plan.js');
const { startupFailureLine } = await import('../cluster/launch-plan.js');

const usage = `NAME
    svc - an S3-compatible object store on erasure-coded drives

SYNOPSIS
    svc server <endpoint-pattern> [<endpoint-pattern> ...]
    svc                  (the server, drives from SVC_VOLUMES)
    svc plan <endpoint-pattern>... [--drive-size 8TiB] [--json]
    svc healthcheck
    svc rc <command> ...  (the client; also installed as svc-rc)
    svc --help

DESCRIPTION
    svc serves the S3 API from local drives or from a cluster of nodes. Every object is
    Reed-Solomon coded across the drives of an erasure set; any K of its K+M shards rebuild it.

    An endpoint pattern is a local path or http://<host>:<port>/<path>; {a...b} ranges expand,
    e.g. svc server ./data/drive{1...4}. Each argument is one pool. Every node of a cluster is
    started with the same arguments, in the same order, at every restart.

COMMANDS
    server       run the server (S3 on SVC_ADDRESS, the web console on SVC_CONSOLE_ADDRESS)
    plan         print the layout and the warnings of a launch, offline
    healthcheck  exit 0 when this node's S3 and console health URLs answer 200
    rc           the command-line client: svc rc --help

ENVIRONMENT
    SVC_VOLUMES          the endpoint patterns when none are given, separated by spaces
    SVC_ACCESS_KEY, SVC_SECRET_KEY
                         root credentials (unset: svcadmin / svcadmin-secret, with a warning)
    SVC_ADDRESS          S3 listener, host:port or :port (default :9000)
    SVC_CONSOLE_ADDRESS  console listener (default :9001)
    SVC_STORAGE_CLASS_STANDARD, SVC_ERASURE_SET_DRIVE_COUNT
                         parity (EC:N) and set width
    SVC_DRIVE_ROOT       a prefix local endpoint paths resolve under
    The documentation's docs/ folder lists every other setting.

SIGNALS
    SIGTERM, SIGINT  graceful shutdown: requests finish, an unfinished heal is saved, exit 0
    SIGHUP           reopen the audit file

FILES
    /etc/default/svc     settings of the Debian package's svc.service
    /var/lib/svc         its drives

EXIT STATUS
    0 on a graceful shutdown; 1 when the server cannot start (the error's code and message are
    printed); 2 on a usage error.`;

/** A listener's address is taken (often a server started earlier still runs): say which and what to do. */
function addressInUseLine(error: unknown): string | undefined {
  const failure = error as { code?: unknown; address?: unknown; port?: unknown };
  if (failure?.code !== 'EADDRINUSE') return undefined;
  const where = typeof failure.port === 'number' ? `${String(failure.address ?? '')}:${failure.port}` : 'the address';
  return `svc: AddressInUse: ${where} is already in use, by another program or a svc server still running (an earlier \`npm start\`?): stop it, or listen elsewhere with SVC_ADDRESS and SVC_CONSOLE_ADDRESS`;
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    console.log(usage);
    return;
  }
  if (command === 'rc') {
    // `svc rc ...` (and `npx svc rc ...`): the client, under a name no other package takes.
    process.argv.splice(2, 1);
    await import('./rc.js');
    return;
  }
  if (command === 'healthcheck') {
    const result = await runHealthcheck(process.env);
    for (const line of result.lines) console.log(line);
    process.exitCode = result.healthy ? 0 : 1;
    return;
  }
  if (command === 'plan') {
    const output = runPlan(rest, process.env);
    process.stdout.write(output.stdout);
    process.stderr.write(output.stderr);
    process.exitCode = output.exitCode;
    return;
  }
  if (command !== undefined && command !== 'server') {
    console.error(`svc: unknown command '${command}'\n${usage}`);
    process.exitCode = 2;
    return;
  }
  let server: RunningServer;
  try {
    server = await startServer(command === undefined ? [] : rest, process.env);
  } catch (error) {
    console.error(addressInUseLine(error) ?? startupFailureLine(error));
    process.exit(1);
  }
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    server.logger.info({ signal }, 'shutting down');
    server.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        server.logger.error({ error: String(error) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // logrotate moved the audit file: write to a new one under the same name.
  process.on('SIGHUP', () => void server.audit.reopen().catch((error: unknown) => server.logger.warn({ error: String(error) }, 'the audit file could not be reopened')));
}

await main(process.argv.slice(2));
