/**
 * A cluster of `svc` containers (testcontainers) from the locally built image: node i runs with
 * host networking on 127.0.0.<i+2>:<port>, so nothing but loopback is used, with its drives in a
 * host directory bind-mounted at /data (SVC_DRIVE_ROOT), which outlives a killed container. The
 * Ryuk reaper is disabled (it needs a registry image); destroy() removes every container.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { StartedTestContainer } from 'testcontainers';
import type { TestCluster } from './cluster.js';
import { freePort, testCredentials } from './server-process.js';

process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';

const run = promisify(execFile);

/**
 * Undefined when a Docker engine answers; otherwise the reason to skip. Under CI (CI=true) or with
 * SVC_REQUIRE_DOCKER=1 a missing engine is a failure: `.ci/run` installs and starts one.
 */
export async function dockerUnavailable(): Promise<string | undefined> {
  const answered = await run('docker', ['info', '--format', '{{.ServerVersion}}']).then(
    () => true,
    () => false,
  );
  if (answered) return undefined;
  const reason = 'no Docker engine answers `docker info` (Debian docker.io; .ci/run installs it and starts dockerd)';
  if (process.env.CI || process.env.SVC_REQUIRE_DOCKER === '1') throw new Error(`container tests require Docker: ${reason}`);
  return reason;
}

export interface ContainerCluster extends TestCluster {
  containers: (StartedTestContainer | undefined)[];
  /** Host directory holding node i's /data at node<i+1>/. */
  root: string;
  /** Stops node i with SIGTERM (a graceful shutdown), removing its container. */
  stop(index: number): Promise<void>;
  /** The output of node i's current container ('' when it is down). */
  nodeLogs(index: number): string;
  /** The whole output of node i's last container that was stopped or killed. */
  endedLogs(index: number): string;
}

export async function startContainerCluster(options: { image: string; nodes: number; drivesPerNode: number; poolPaths?: string[]; env?: Record<string, string> }): Promise<ContainerCluster> {
  const { GenericContainer, Wait, getContainerRuntimeClient } = await import('testcontainers');
  const root = await mkdtemp(join(tmpdir(), 'svc-containers-'));
  const port = await freePort('127.0.0.2');
  const hosts = Array.from({ length: options.nodes }, (_, index) => `127.0.0.${index + 2}`);
  const args = ['server', ...(options.poolPaths ?? [`/data{1...${options.drivesPerNode}}`]).map((path) => `http://127.0.0.{2...${options.nodes + 1}}:${port}${path}`)];
  const containers: (StartedTestContainer | undefined)[] = hosts.map(() => undefined);
  const output: string[] = hosts.map(() => '');
  const history: string[] = [];
  const ended: string[] = hosts.map(() => '');

  async function startNode(index: number): Promise<StartedTestContainer> {
    const data = join(root, `node${index + 1}`);
    await mkdir(data, { recursive: true });
    const container = await new GenericContainer(options.image)
      .withNetworkMode('host')
      .withCommand(args)
      .withEnvironment({
        SVC_ADDRESS: `${hosts[index]}:${port}`,
        SVC_CONSOLE_ENABLE: 'false',
        SVC_DRIVE_ROOT: '/data',
        SVC_ACCESS_KEY: testCredentials.accessKeyId,
        SVC_SECRET_KEY: testCredentials.secretAccessKey,
        ...options.env,
      })
      .withBindMounts([{ source: data, target: '/data', mode: 'rw' }])
      .withLabels({ 'org.svc.test': 'container-cluster' })
      // `listening` is logged once format quorum is reached and the node serves.
      .withWaitStrategy(Wait.forLogMessage(/"msg":"listening"/))
      .withStartupTimeout(90_000)
      .withLogConsumer((stream) => {
        stream.on('data', (chunk: Buffer | string) => (output[index] += chunk.toString()));
      })
      .start();
    containers[index] = container;
    return container;
  }

  const cluster: ContainerCluster = {
    containers,
    root,
    urls: hosts.map((host) => `http://${host}:${port}`),
    start: (index) => startNode(index),
    async kill(index) {
      const container = containers[index];
      if (!container) return;
      containers[index] = undefined;
      const client = await getContainerRuntimeClient();
      const handle = client.container.getById(container.getId());
      await handle.kill({ signal: 'SIGKILL' });
      await client.container.remove(handle, { removeVolumes: true });
      history.push(`--- node ${index + 1} (killed)\n${output[index]}`);
      ended[index] = output[index]!;
      output[index] = '';
    },
    nodeLogs: (index) => output[index] ?? '',
    endedLogs: (index) => ended[index] ?? '',
    async stop(index) {
      const container = containers[index];
      if (!container) return;
      containers[index] = undefined;
      await container.stop({ timeout: 30_000, remove: true }); // milliseconds: SIGTERM, SIGKILL only after 30 s
      history.push(`--- node ${index + 1} (stopped)\n${output[index]}`);
      ended[index] = output[index]!;
      output[index] = '';
    },
    logs: () => [...history, ...output.map((text, index) => `--- node ${index + 1}\n${text}`)].join('\n').slice(-20_000),
    async destroy() {
      await Promise.all(containers.map((container) => container?.stop({ timeout: 0, remove: true }).catch(() => undefined)));
      // The containers wrote as root: remove their files through a container too when the host cannot.
      await rm(root, { recursive: true, force: true });
    },
  };
  try {
    await Promise.all(hosts.map((_, index) => startNode(index)));
  } catch (error) {
    console.error(cluster.logs());
    await cluster.destroy();
    throw error;
  }
  return cluster;
}

/**
 * Runs one container that is expected to refuse its launch (`docker run`, host networking) with
 * `root` bind-mounted at /data; answers its exit code (or 'timeout') and its output.
 */
export async function refusedContainerLaunch(options: { image: string; root: string; args: string[]; env?: Record<string, string>; timeoutMs?: number }): Promise<{ code: number | 'timeout'; output: string }> {
  const env = { SVC_CONSOLE_ENABLE: 'false', SVC_ACCESS_KEY: testCredentials.accessKeyId, SVC_SECRET_KEY: testCredentials.secretAccessKey, SVC_ADDRESS: `127.0.0.1:${await freePort()}`, ...options.env };
  const name = `svc-refused-${process.pid}-${Date.now().toString(36)}`;
  const dockerArgs = ['run', '--rm', '--name', name, '--network', 'host', '--label', 'org.svc.test=refused-launch', '-v', `${options.root}:/data`, ...Object.entries(env).flatMap(([key, value]) => ['-e', `${key}=${value}`]), options.image, 'server', ...options.args];
  const answer = await run('docker', dockerArgs, { timeout: options.timeoutMs ?? 30_000, killSignal: 'SIGKILL' }).then(
    ({ stdout, stderr }) => ({ code: 0 as number | 'timeout', output: stdout + stderr }),
    (error: { code?: number | string; killed?: boolean; stdout?: string; stderr?: string }) => ({ code: error.killed ? ('timeout' as const) : Number(error.code), output: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
  );
  if (answer.code === 'timeout') await run('docker', ['rm', '-f', name]).catch(() => undefined);
  return answer;
}
