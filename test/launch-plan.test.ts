/**
 * `svc plan` against `svc server`, row by row of the launch-rule table: for every rejection the
 * server's own start (startServer, in this process) must fail with exactly the line the planner
 * printed, touching no drive, and a few rejections are run as real `svc server` processes that
 * must exit 1 printing that line; for accepted layouts a real server must log exactly
 * the warnings the planner listed and build the pools, sets and parities it described. Rows whose
 * endpoints are other hosts cannot start one server alone: for them the planner is compared with
 * the functions the server calls (readServerConfig, redundancyWarnings), which is what the rows
 * started for real show it shares.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import pino from 'pino';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { freePort, repoRoot, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { planLaunch, redundancyWarnings, configWarnings, startupFailureLine } from '../src/cluster/launch-plan.js';
import { startServer } from '../src/main.js';
import { readServerConfig } from '../src/cluster/server-config.js';
import { runPlan } from '../src/cli/plan.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-plan-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The environment startSvc gives the server, with the row's own variables. */
function serverEnv(env: Record<string, string>): Record<string, string> {
  return { SVC_ACCESS_KEY: testCredentials.accessKeyId, SVC_SECRET_KEY: testCredentials.secretAccessKey, ...env };
}

interface Row {
  name: string;
  args: (dir: string) => string[];
  env?: Record<string, string>;
  /** The server's port must be fixed (a URL endpoint naming this node). */
  ownPort?: boolean;
}

const rejections: Row[] = [
  { name: 'no-endpoints', args: () => [] },
  { name: 'multi-pool-needs-ellipsis', args: (dir) => [join(dir, 'a{1...4}'), join(dir, 'b')] },
  { name: 'min-two-drives', args: (dir) => [join(dir, 'a{3...3}')] },
  { name: 'single-drive-in-multi-pool', args: (dir) => [join(dir, 'a{1...4}'), join(dir, 'b{1...1}')] },
  { name: 'duplicate-endpoint', args: (dir) => [join(dir, 'a{1...4}'), join(dir, 'a{4...7}')] },
  { name: 'no-valid-set-width', args: (dir) => [join(dir, 'a{1...17}')] },
  { name: 'set-drive-count-invalid', args: (dir) => [join(dir, 'a{1...8}')], env: { SVC_ERASURE_SET_DRIVE_COUNT: '3' } },
  { name: 'single-drive-needs-local-path', args: (dir) => [`http://127.0.0.1:PORT${join(dir, 'remote')}`], ownPort: true },
  { name: 'ellipsis-syntax', args: (dir) => [join(dir, 'a{3...1}')] },
  { name: 'endpoint-syntax', args: () => ['http://127.0.0.1:9/'] },
  { name: 'parity-at-most-half', args: (dir) => [join(dir, 'a{1...4}')], env: { SVC_STORAGE_CLASS_STANDARD: 'EC:3' } },
  { name: 'standard-at-least-rrs', args: (dir) => [join(dir, 'a{1...4}')], env: { SVC_STORAGE_CLASS_STANDARD: 'EC:1', SVC_STORAGE_CLASS_RRS: 'EC:2' } },
  { name: 'rrs-on-single-drive', args: (dir) => [join(dir, 'single')], env: { SVC_STORAGE_CLASS_RRS: 'EC:0' } },
  { name: 'parity syntax', args: (dir) => [join(dir, 'a{1...4}')], env: { SVC_STORAGE_CLASS_RRS: 'EC2' } },
  { name: 'set width not a number', args: (dir) => [join(dir, 'a{1...4}')], env: { SVC_ERASURE_SET_DRIVE_COUNT: 'four' } },
  { name: 'secret key too short', args: (dir) => [join(dir, 'a{1...4}')], env: { SVC_SECRET_KEY: 'short' } },
];

const accepted: Row[] = [
  { name: 'pinned width, explicit parity: two sets of eight', args: (dir) => [join(dir, 'd{1...16}')], env: { SVC_ERASURE_SET_DRIVE_COUNT: '8', SVC_STORAGE_CLASS_STANDARD: 'EC:3' } },
  { name: 'two pools, a legacy-name conflict and a large inline block', args: (dir) => [join(dir, 'a{1...4}'), join(dir, 'b{1...6}')], env: { SVC_STORAGE_CLASS_INLINE_BLOCK: '256KiB', SVC_STORAGE_CLASS_RRS: 'EC:1', MINIO_STORAGE_CLASS_RRS: 'EC:2' } },
  { name: 'single drive (automatic zero parity)', args: (dir) => [join(dir, 'single')] },
];

/** Rows of other hosts: one server cannot start alone on them. */
const offlineRows: Row[] = [
  { name: 'four hosts of four drives', args: () => ['http://127.0.0.{1...4}:9000/d{1...4}'] },
  { name: 'two hosts, two pools', args: () => ['http://127.0.0.{1...2}:9000/a{1...2}', 'http://127.0.0.{1...2}:9000/b{1...4}'], env: { SVC_STORAGE_CLASS_STANDARD: 'EC:1' } },
  { name: 'uneven spread: three hosts of two', args: () => ['http://127.0.0.{1...3}:9000/d{1...2}'] },
];

async function rowArgs(row: Row): Promise<{ dir: string; args: string[]; port?: number }> {
  const dir = join(root, row.name.replace(/\W+/g, '-'));
  const port = row.ownPort ? await freePort() : undefined;
  return { dir, args: row.args(dir).map((argument) => argument.replace('PORT', String(port))), ...(port !== undefined ? { port } : {}) };
}

function warnLines(logs: string): string[] {
  return logs.split('\n').flatMap((line) => {
    try {
      const record = JSON.parse(line) as { level?: number; msg?: string };
      return record.level === 40 && record.msg !== undefined ? [record.msg] : [];
    } catch {
      return [];
    }
  });
}

describe('svc plan and svc server agree', () => {
  it('on every rejection: startServer fails with exactly the planner\'s line, before touching a drive', async () => {
    for (const row of rejections) {
      const { dir, args, port } = await rowArgs(row);
      const plan = planLaunch(args, serverEnv(row.env ?? {}));
      expect(plan.accepted, row.name).toBe(false);
      if (plan.accepted) continue;
      if (row.name.includes('-')) expect(plan.rejection.rule, row.name).toBe(row.name);
      const env = { ...serverEnv(row.env ?? {}), SVC_ADDRESS: `127.0.0.1:${port ?? 0}`, SVC_CODING_THREADS: '0' };
      const error = await startServer(args, env, pino({ level: 'silent' })).then(async (server) => {
        await server.stop();
        return undefined;
      }, (caught: unknown) => caught);
      expect(error, row.name).toBeDefined();
      expect(startupFailureLine(error), row.name).toBe(plan.rejection.line);
      expect(await readdir(root).then((names) => names.filter((name) => name.startsWith(basename(dir))))).toEqual([]);
    }
  });

  it('on rejections as processes: `svc server` exits 1 printing the planner\'s line', async () => {
    const rows = rejections.filter((row) => ['no-endpoints', 'single-drive-needs-local-path', 'rrs-on-single-drive', 'secret key too short'].includes(row.name));
    await Promise.all(rows.map(async (row) => {
      const { args, port } = await rowArgs(row);
      const plan = planLaunch(args, serverEnv(row.env ?? {}));
      if (plan.accepted) throw new Error(`${row.name} was accepted`);
      const server = await startSvc({ args, env: row.env ?? {}, waitReady: false, ...(port !== undefined ? { port } : {}) });
      const code = await Promise.race([server.exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 30_000))]);
      if (code === 'timeout') await server.kill();
      expect(code, `${row.name}\n${server.logs()}`).toBe(1);
      expect(server.logs().split('\n'), row.name).toContain(plan.rejection.line);
    }));
  }, 60_000);

  it('on accepted layouts: the same warnings logged, the same pools, sets and parities built', async () => {
    for (const row of accepted) {
      const dir = join(root, row.name.replace(/\W+/g, '-'));
      const args = row.args(dir);
      const plan = planLaunch(args, serverEnv(row.env ?? {}));
      expect(plan.accepted, row.name).toBe(true);
      if (!plan.accepted) continue;
      let server: SvcProcess | undefined;
      try {
        server = await startSvc({ args, env: { SVC_CONSOLE_ENABLE: 'false', ...row.env } });
        const pools = (await admin(server.url, 'GET', '/svc/admin/v3/pools/list')).body.pools as { endpointCount: number; setCount: number; drivesPerSet: number }[];
        expect(pools.map((pool) => [pool.endpointCount, pool.setCount, pool.drivesPerSet]), row.name).toEqual(plan.pools.map((pool) => [pool.drives, pool.setCount, pool.setDriveCount]));
        const classes = (await admin(server.url, 'GET', '/svc/admin/v4/runtime/capabilities')).body.storageClasses as { STANDARD: string; REDUCED_REDUNDANCY: string }[];
        expect(classes.map((entry) => [entry.STANDARD, entry.REDUCED_REDUNDANCY]), row.name).toEqual(plan.pools.map((pool) => pool.classes.map((entry) => `EC:${entry.parity}`)));
        await server.stop();
        expect(warnLines(server.logs()).sort(), row.name).toEqual(plan.warnings.map((warning) => warning.message).sort());
      } finally {
        await server?.kill();
      }
    }
  }, 120_000);

  it('on layouts over other hosts: the planner is the server configuration and warnings, unchanged', () => {
    for (const row of offlineRows) {
      const env = serverEnv(row.env ?? {});
      const plan = planLaunch(row.args(''), env);
      const config = readServerConfig(row.args(''), env);
      expect(plan.accepted, row.name).toBe(true);
      if (!plan.accepted) continue;
      expect(plan.pools.map((pool) => [pool.pattern, pool.drives, pool.setCount, pool.setDriveCount]), row.name).toEqual(config.layout.pools.map((pool) => [pool.pattern, pool.endpoints.length, pool.setCount, pool.setDriveCount]));
      expect(plan.warnings, row.name).toEqual([...configWarnings(config), ...redundancyWarnings(config.layout, config.storageClass)]);
    }
    const uneven = planLaunch(offlineRows[2]!.args(''), serverEnv({}));
    expect(uneven.accepted && uneven.pools[0]!.sets.map((set) => set.hosts)).toEqual([[{ host: '127.0.0.1:9000', drives: 2 }, { host: '127.0.0.2:9000', drives: 2 }, { host: '127.0.0.3:9000', drives: 2 }]]);
    expect(uneven.accepted && uneven.pools[0]!.classes.map((entry) => entry.tolerates)).toEqual([{ readDrives: 3, writeDrives: 2, readHosts: 1 }, { readDrives: 1, writeDrives: 1, readHosts: 0 }]);
  });
});

describe('svc plan command', () => {
  it('prints usable capacity with --drive-size, JSON with --json, and exits 1 with the rule on a rejection', async () => {
    const text = runPlan(['/data/d{1...16}', '--drive-size', '8TiB'], serverEnv({}));
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toContain('STANDARD EC:4 (K=12, M=4): usable 75.0% (96.0 TiB)');
    expect(text.stdout).toContain('capacity: 128 TiB raw, 96.0 TiB usable');
    const json = JSON.parse(runPlan(['/data/d{1...16}', '--json', '--drive-size=8TiB'], serverEnv({})).stdout);
    expect(json.usableBytes).toBe(96 * 1024 ** 4);
    const refused = runPlan(['/a{1...17}'], serverEnv({}));
    expect(refused).toMatchObject({ exitCode: 1, stdout: '' });
    expect(refused.stderr).toContain('rule: no-valid-set-width');
    expect(runPlan(['--drive-size', 'lots', '/a{1...4}'], {}).exitCode).toBe(2);
    expect(runPlan(['--frobnicate'], {}).exitCode).toBe(2);
  });

  it('runs as `svc plan` without starting a server or touching a drive', async () => {
    const dir = join(root, 'cli');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/svc.ts', 'plan', join(dir, 'd{1...8}'), '--json'], { cwd: repoRoot, env: { PATH: process.env.PATH ?? '' } });
    expect(JSON.parse(stdout)).toMatchObject({ accepted: true, pools: [{ setCount: 1, setDriveCount: 8 }] });
    expect((await readdir(root)).includes('cli')).toBe(false);
  }, 30_000);
});
