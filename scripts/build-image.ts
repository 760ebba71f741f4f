/**
 * Builds the container images locally, with no registry:
 *
 *   svc-base:node-<version>  `docker import` of a minimal root filesystem: the running `node`
 *                            binary and the shared libraries `ldd` lists for it, /etc basics, /tmp.
 *   svc:latest               the project on that base (Dockerfile): dist/ and production
 *                            node_modules, installed in a staging directory.
 *   svc:slim                 the single executable (npm run package) on a root filesystem of its
 *                            shared libraries, run as the non-root user svc: the compose files' image.
 *   svc-caddy:latest         Debian's Caddy binary the same way, for the proxy kit
 *                            (deploy/docker-compose.proxy.yml); skipped when Caddy is missing.
 *
 * Run with `npm run image` (after `npm run build`); the container tests call buildImages().
 * A base image that already exists is reused; the staging directory's node_modules is reused
 * while package-lock.json is unchanged.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, chown, cp, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('..', import.meta.url));

export const projectImage = 'svc:latest';
export const baseImage = `svc-base:node-${process.versions.node}`;

export interface BuildOptions {
  log?: (line: string) => void;
  /** Where production node_modules are staged (kept between builds). */
  stagingDir?: string;
}

export async function buildImages(options: BuildOptions = {}): Promise<{ base: string; project: string; slim: string }> {
  const log = options.log ?? ((line: string) => console.log(line));
  if (!existsSync(join(repoRoot, 'dist/src/cli/svc.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  if (!existsSync(join(repoRoot, 'dist/console-ui/index.html'))) throw new Error('dist/console-ui/ (the web console) is missing: run `npm run build` first');
  if (await imageExists(baseImage)) log(`${baseImage}: present`);
  else await importBaseImage(log);
  const staging = options.stagingDir ?? join(tmpdir(), 'svc-image-staging');
  await stageProject(staging, log);
  log(`building ${projectImage}`);
  await docker(['build', '--build-arg', `BASE=${baseImage}`, '-t', projectImage, '-f', join(staging, 'Dockerfile'), staging], { DOCKER_BUILDKIT: '0' });
  return { base: baseImage, project: projectImage, slim: await buildSlimImage(log) };
}

export const slimImage = 'svc:slim';
/** The user the slim image runs as, and the directories it owns (the compose files mount drives there). */
const slimUser = { name: 'svc', uid: 1000, gid: 1000 };
const slimDataDirs = ['data', 'data1', 'data2', 'data3', 'data4'];

/**
 * `svc:slim`: the single executable with the shared libraries it needs and nothing else (no
 * shell, no node, no node_modules), run as the user svc (uid 1000), with the health check of
 * SPEC's rule 8 (Dockerfile.slim). The root filesystem is imported as `svc-runtime:<hash>`.
 */
export async function buildSlimImage(log: (line: string) => void = (line) => console.log(line)): Promise<string> {
  const { buildExecutable } = await import('./package.js');
  const { executable } = await buildExecutable(log);
  const runtime = `svc-runtime:${createHash('sha256').update((await sharedLibraries(executable)).join('\n')).update(String(slimUser.uid)).update(slimDataDirs.join()).digest('hex').slice(0, 12)}`;
  if (await imageExists(runtime)) log(`${runtime}: present`);
  else {
    log(`importing ${runtime}`);
    await importRootfsImage({ image: runtime, binaries: [], libraryOf: [executable], dirs: ['tmp', ...slimDataDirs], owner: { ...slimUser, paths: slimDataDirs }, changes: ['ENV PATH=/usr/bin:/bin'] });
  }
  const context = await mkdtemp(join(tmpdir(), 'svc-slim-'));
  try {
    await cp(executable, join(context, 'svc'));
    await cp(join(repoRoot, 'Dockerfile.slim'), join(context, 'Dockerfile'));
    log(`building ${slimImage}`);
    await docker(['build', '--build-arg', `BASE=${runtime}`, '-t', slimImage, context], { DOCKER_BUILDKIT: '0' });
  } finally {
    await rm(context, { recursive: true, force: true });
  }
  return slimImage;
}

/** Debian's Caddy, for deploy/docker-compose.proxy.yml; absent when /usr/bin/caddy is. */
export const proxyImage = 'svc-caddy:latest';
const caddyBinary = '/usr/bin/caddy';

/**
 * `svc-caddy:<version>`, tagged `svc-caddy:latest`: the Caddy binary of this machine (Debian's
 * package) with its libraries and the CA bundle, so the proxy kit runs with no registry. Reused
 * when that version's image exists. Undefined (and nothing built) when Caddy is not installed.
 */
export async function buildProxyImage(log: (line: string) => void = (line) => console.log(line)): Promise<string | undefined> {
  if (!existsSync(caddyBinary)) {
    log(`${caddyBinary} is missing (Debian package caddy): no proxy image`);
    return undefined;
  }
  const { stdout } = await run(caddyBinary, ['version']);
  const version = /v?(\d+\.\d+\.\d+)/.exec(stdout)?.[1] ?? 'unknown';
  const versioned = `svc-caddy:${version}`;
  if (await imageExists(versioned)) log(`${versioned}: present`);
  else {
    log(`importing ${versioned}: ${caddyBinary}`);
    await importRootfsImage({
      image: versioned,
      binaries: [{ from: await realpath(caddyBinary), to: 'usr/bin/caddy' }],
      hostFiles: ['/etc/ssl/certs/ca-certificates.crt', '/etc/mime.types'],
      dirs: ['tmp', 'root', 'data', 'config', 'etc/caddy'],
      changes: ['ENV PATH=/usr/bin:/bin', 'ENV XDG_DATA_HOME=/data', 'ENV XDG_CONFIG_HOME=/config', 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt', 'EXPOSE 80 443', 'CMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]'],
    });
  }
  await docker(['tag', versioned, proxyImage]);
  return proxyImage;
}

async function imageExists(name: string): Promise<boolean> {
  return run('docker', ['image', 'inspect', name]).then(
    () => true,
    () => false,
  );
}

/** The libraries the dynamic loader needs for `binary`, as absolute paths (ldd's output). */
async function sharedLibraries(binary: string): Promise<string[]> {
  const { stdout } = await run('ldd', [binary]);
  const paths = new Set<string>();
  for (const line of stdout.split('\n')) {
    const match = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (match) paths.add(match[1]!);
  }
  return [...paths];
}

/** One program of a root filesystem: the binary at `from`, placed at `to`, with its libraries. */
interface RootfsImage {
  image: string;
  binaries: { from: string; to: string }[];
  /** Host files copied under the same path (e.g. the CA bundle), when they exist. */
  hostFiles?: string[];
  /** Programs placed by other means (a later COPY) whose shared libraries the image needs. */
  libraryOf?: string[];
  /** Directories to create (mode 755; /tmp gets 1777). */
  dirs: string[];
  /** A user (besides root and nobody) in /etc/passwd and /etc/group, owning these paths. */
  owner?: { name: string; uid: number; gid: number; paths: string[] };
  /** `docker import --change` instructions (ENV, CMD, ...). */
  changes: string[];
}

async function importBaseImage(log: (line: string) => void): Promise<void> {
  const node = await realpath(process.execPath);
  log(`importing ${baseImage}: node ${process.versions.node}`);
  await importRootfsImage({ image: baseImage, binaries: [{ from: node, to: 'usr/local/bin/node' }], dirs: ['tmp', 'root', 'data'], changes: ['ENV PATH=/usr/local/bin:/usr/bin:/bin'] });
}

/** A minimal image made of binaries and the shared libraries `ldd` lists for them, with /etc basics. */
async function importRootfsImage(spec: RootfsImage): Promise<void> {
  const rootfs = await mkdtemp(join(tmpdir(), 'svc-rootfs-'));
  try {
    const libraries = new Set<string>();
    for (const binary of spec.binaries) {
      await mkdir(join(rootfs, dirname(binary.to)), { recursive: true });
      await cp(binary.from, join(rootfs, binary.to));
      for (const library of await sharedLibraries(binary.from)) libraries.add(library);
    }
    for (const program of spec.libraryOf ?? []) for (const library of await sharedLibraries(program)) libraries.add(library);
    for (const file of [...libraries, ...(spec.hostFiles ?? []).filter((path) => existsSync(path))]) {
      // Copy the file the name resolves to, under the name the loader (or the program) looks for.
      await mkdir(join(rootfs, dirname(file)), { recursive: true });
      await cp(await realpath(file), join(rootfs, file));
    }
    await mkdir(join(rootfs, 'etc'), { recursive: true });
    const owner = spec.owner;
    await writeFile(join(rootfs, 'etc/passwd'), `root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n${owner ? `${owner.name}:x:${owner.uid}:${owner.gid}:${owner.name}:/data:/sbin/nologin\n` : ''}`);
    await writeFile(join(rootfs, 'etc/group'), `root:x:0:\nnogroup:x:65534:\n${owner ? `${owner.name}:x:${owner.gid}:\n` : ''}`);
    await writeFile(join(rootfs, 'etc/nsswitch.conf'), 'hosts: files dns\n');
    for (const dir of spec.dirs) await mkdir(join(rootfs, dir), { recursive: true, mode: dir === 'tmp' ? 0o1777 : 0o755 });
    await chmod(join(rootfs, 'tmp'), 0o1777).catch(() => undefined);
    for (const path of owner?.paths ?? []) await chown(join(rootfs, path), owner!.uid, owner!.gid);
    await pipeTarIntoImport(rootfs, spec.image, spec.changes);
  } finally {
    await rm(rootfs, { recursive: true, force: true });
  }
}

async function pipeTarIntoImport(rootfs: string, image: string, changes: string[]): Promise<void> {
  const tar = spawn('tar', ['-C', rootfs, '--numeric-owner', '-c', '.'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const importer = spawn('docker', ['import', ...changes.flatMap((change) => ['--change', change]), '-', image], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  importer.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  tar.stdout.pipe(importer.stdin);
  const [tarCode, importCode] = await Promise.all([exitOf(tar), exitOf(importer)]);
  if (tarCode !== 0 || importCode !== 0) throw new Error(`docker import of ${image} failed (tar ${tarCode}, import ${importCode}): ${stderr}`);
}

function exitOf(child: ReturnType<typeof spawn>): Promise<number | null> {
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
}

/** dist/, package files, production node_modules and the Dockerfile in one build context. */
async function stageProject(staging: string, log: (line: string) => void): Promise<void> {
  await mkdir(staging, { recursive: true });
  const lock = await readFile(join(repoRoot, 'package-lock.json'));
  const lockHash = createHash('sha256').update(lock).update(await readFile(join(repoRoot, 'package.json'))).digest('hex');
  const stamp = join(staging, '.lock-hash');
  const staged = existsSync(stamp) ? (await readFile(stamp, 'utf8')).trim() : '';
  if (staged !== lockHash || !existsSync(join(staging, 'node_modules'))) {
    log('installing production dependencies in the staging directory');
    await rm(join(staging, 'node_modules'), { recursive: true, force: true });
    await cp(join(repoRoot, 'package.json'), join(staging, 'package.json'));
    await cp(join(repoRoot, 'package-lock.json'), join(staging, 'package-lock.json'));
    await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: staging, maxBuffer: 16 * 1024 * 1024 });
    await writeFile(stamp, `${lockHash}\n`);
  }
  await rm(join(staging, 'dist'), { recursive: true, force: true });
  await cp(join(repoRoot, 'dist'), join(staging, 'dist'), { recursive: true, filter: (source) => !source.endsWith('.map') });
  await cp(join(repoRoot, 'Dockerfile'), join(staging, 'Dockerfile'));
  await writeFile(join(staging, '.dockerignore'), '.lock-hash\n');
}

async function docker(args: string[], env: Record<string, string> = {}): Promise<void> {
  const child = spawn('docker', args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await exitOf(child);
  if (code !== 0) throw new Error(`docker ${args[0]} failed with ${code}:\n${output.slice(-4000)}`);
}

/** The standalone conformance runner's image: its one-file bundle on the node base image. */
export const conformanceImage = 'svc-conformance:latest';

/**
 * Builds `svc-conformance:latest` from the bundle `npm run conformance:package` leaves in
 * `build/conformance/package/dist/`, so that `docker run --network host svc-conformance --endpoint ...`
 * checks a server with no clone and no Node.js on the host.
 */
export async function buildConformanceImage(log: (line: string) => void = (line) => console.log(line)): Promise<string> {
  const bundle = join(repoRoot, 'build/conformance/package/dist/svc-conformance.mjs');
  if (!existsSync(bundle)) throw new Error('the conformance bundle is missing: run `npm run conformance:package` first');
  if (await imageExists(baseImage)) log(`${baseImage}: present`);
  else await importBaseImage(log);
  const context = await mkdtemp(join(tmpdir(), 'svc-conformance-image-'));
  try {
    await cp(bundle, join(context, 'svc-conformance.mjs'));
    await writeFile(join(context, 'Dockerfile'), ['ARG BASE', 'FROM ${BASE}', 'WORKDIR /work', 'COPY svc-conformance.mjs /app/svc-conformance.mjs', 'ENTRYPOINT ["node", "/app/svc-conformance.mjs"]', 'CMD ["--help"]', ''].join('\n'));
    log(`building ${conformanceImage}`);
    await docker(['build', '--build-arg', `BASE=${baseImage}`, '-t', conformanceImage, context], { DOCKER_BUILDKIT: '0' });
  } finally {
    await rm(context, { recursive: true, force: true });
  }
  return conformanceImage;
}

if (process.argv[1] && (await realpath(process.argv[1])) === (await realpath(fileURLToPath(import.meta.url)))) {
  const built = await buildImages();
  console.log(`built ${built.project} on ${built.base}, and ${built.slim}`);
  const proxy = await buildProxyImage();
  if (proxy) console.log(`built ${proxy} (deploy/docker-compose.proxy.yml)`);
}
