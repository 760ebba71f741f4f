/**
 * `npm run figures:install`: measures each way of installing svc on this machine and writes the
 * table between the `install-figures` markers of README.md and docs/getting-started.md.
 *
 *   npm          `npm ci` (with its build) in a fresh copy of package.json and the lock file,
 *                then the size of node_modules and dist/
 *   executable   `npm run package`'s file: copied into place (the install), its size
 *   .deb         `dpkg -i` on a fresh Debian root (a debootstrap image), the .deb's size and
 *                the size installed
 *   image        `docker load` of `svc:slim` saved to a file, the image's size
 *
 * `--skip npm` leaves a way out (its row keeps the figures already in the README).
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildSlimImage } from './build-image.js';
import { buildDebianPackage } from './package-deb.js';
import { buildExecutable } from './package.js';
import { repoRoot } from './package-paths.js';

const run = promisify(execFile);
const big = { maxBuffer: 64 * 1024 * 1024 };

interface Row {
  way: string;
  command: string;
  seconds: number;
  size: string;
}

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

async function timed(action: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await action();
  return Number(process.hrtime.bigint() - started) / 1e9;
}

async function duBytes(path: string): Promise<number> {
  const { stdout } = await run('du', ['-sb', path]);
  return Number(stdout.split(/\s/)[0]);
}

async function measureNpm(): Promise<Row> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-figures-npm-'));
  try {
    await run('git', ['clone', '--quiet', '--depth', '1', `file://${repoRoot}`, dir], big).catch(async () => run('git', ['clone', '--quiet', repoRoot, dir], big));
    const seconds = await timed(() => run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, ...big }));
    const [modules, dist] = await Promise.all([duBytes(join(dir, 'node_modules')), duBytes(join(dir, 'dist'))]);
    const { stdout } = await run('find', ['node_modules', '-name', 'package.json'], { cwd: dir, ...big });
    const packages = stdout.split('\n').filter((path) => /(^|\/)node_modules\/(@[^/]+\/)?[^/@][^/]*\/package\.json$/.test(path)).length;
    return { way: 'npm', command: '`npm install` in a fresh clone (npm cache warm)', seconds, size: `${mib(modules)} node_modules (${packages} packages) + ${mib(dist)} dist/` };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function measureExecutable(): Promise<Row> {
  const { executable, sizeBytes } = await buildExecutable(() => undefined);
  const dir = await mkdtemp(join(tmpdir(), 'svc-figures-exe-'));
  try {
    const seconds = await timed(async () => {
      await cp(executable, join(dir, 'svc'));
      await run(join(dir, 'svc'), ['--help'], { env: { PATH: '/nonexistent' } });
    });
    return { way: 'single executable', command: 'copy `svc` into place, first run', seconds, size: mib(sizeBytes) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function measureDeb(): Promise<Row> {
  const { debianRootImage } = await import('../test/helpers/debian-root.js');
  const image = await debianRootImage();
  const built = await buildDebianPackage({ log: () => undefined });
  const name = `svc-figures-${process.pid}`;
  await run('docker', ['run', '-d', '--rm', '--name', name, '-v', `${join(built.path, '..')}:/packages:ro`, image, 'sleep', 'infinity']);
  try {
    const seconds = await timed(() => run('docker', ['exec', name, 'dpkg', '-i', `/packages/${built.path.split('/').pop()}`], big));
    const { stdout } = await run('docker', ['exec', name, 'dpkg-query', '-W', '-f', '${Installed-Size}', 'svc']);
    return { way: 'Debian package', command: '`dpkg -i` on a fresh Debian root', seconds, size: `${mib(built.sizeBytes)} .deb, ${mib(Number(stdout) * 1024)} installed` };
  } finally {
    await run('docker', ['rm', '-f', name]).catch(() => undefined);
  }
}

async function measureImage(): Promise<Row> {
  const image = await buildSlimImage(() => undefined);
  const dir = await mkdtemp(join(tmpdir(), 'svc-figures-image-'));
  try {
    const archive = join(dir, 'svc-slim.tar');
    await run('docker', ['save', '-o', archive, image], big);
    const archiveBytes = (await stat(archive)).size;
    const { stdout } = await run('docker', ['image', 'inspect', image, '--format', '{{.Size}}']);
    await run('docker', ['image', 'rm', image]);
    const seconds = await timed(() => run('docker', ['load', '-i', archive], big));
    return { way: 'container image `svc:slim`', command: '`docker load` of the saved image', seconds, size: `${mib(Number(stdout))} (${mib(archiveBytes)} saved)` };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function table(rows: Row[], previous: string): string {
  const kept = (way: string): string | undefined => previous.split('\n').find((line) => line.startsWith(`| ${way} |`));
  const lines = rows.map((row) => (Number.isNaN(row.seconds) ? (kept(row.way) ?? `| ${row.way} | ${row.command} | not measured | ${row.size} |`) : `| ${row.way} | ${row.command} | ${row.seconds.toFixed(1)} s | ${row.size} |`));
  return ['| way in | install | time | size |', '|---|---|---:|---|', ...lines].join('\n');
}

async function writeFigures(path: string, rows: Row[]): Promise<void> {
  const text = await readFile(join(repoRoot, path), 'utf8');
  const pattern = /(<!-- install-figures[^>]*-->\n)([\s\S]*?)(<!-- \/install-figures -->)/;
  const match = pattern.exec(text);
  if (!match) throw new Error(`${path} has no install-figures markers`);
  await writeFile(join(repoRoot, path), text.replace(pattern, (_all, open: string, _rows: string, close: string) => `${open}${table(rows, match[2]!)}\n${close}`));
}

const skipped = new Set(process.argv.flatMap((argument, index) => (process.argv[index - 1] === '--skip' ? argument.split(',') : [])));
const measures: [string, string, () => Promise<Row>][] = [
  ['npm', 'npm', measureNpm],
  ['executable', 'single executable', measureExecutable],
  ['deb', 'Debian package', measureDeb],
  ['image', 'container image `svc:slim`', measureImage],
];
const rows: Row[] = [];
for (const [key, way, measure] of measures) {
  if (skipped.has(key)) rows.push({ way, command: '', seconds: Number.NaN, size: '' });
  else {
    const row = await measure();
    console.log(`${row.way}: ${row.seconds.toFixed(1)} s, ${row.size}`);
    rows.push(row);
  }
}
for (const path of ['README.md', 'docs/getting-started.md']) await writeFigures(path, rows);
