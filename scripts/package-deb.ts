/**
 * `npm run package:deb`: the Debian package of the single executable (scripts/package.ts), with
 * dpkg-deb. Its files come from packaging/debian/:
 *
 *   /usr/bin/svc                     the executable (server, `svc plan`, `svc rc ...`)
 *   /usr/bin/svc-rc -> svc           the client under a name that leaves Debian's `rc` shell alone
 *   /lib/systemd/system/svc.service  the unit (user svc, EnvironmentFile=/etc/default/svc)
 *   /etc/default/svc                 the settings, commented (a conffile: upgrades keep it)
 *   /usr/share/man/man1/svc.1.gz     `svc --help` as a manual page
 *
 * postinst creates the svc user and /var/lib/svc; remove and purge keep /var/lib/svc.
 */
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { executablePath, packageDir, repoRoot } from './package-paths.js';

const run = promisify(execFile);
const debianDir = join(repoRoot, 'packaging/debian');

export interface DebianPackage {
  path: string;
  version: string;
  sizeBytes: number;
}

function debianArchitecture(): string {
  const known: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'armhf', ppc64: 'ppc64el', s390x: 's390x' };
  const architecture = known[process.arch];
  if (!architecture) throw new Error(`no Debian architecture for ${process.arch}`);
  return architecture;
}

/** `svc --help` as roff: the text kept as it is, under the manual's title. */
function manualPage(help: string, version: string): string {
  const escaped = help.replace(/\\/g, '\\e').replace(/^([.'])/gm, '\\&$1');
  return `.TH SVC 1 "" "svc ${version}" "User Commands"\n.nf\n${escaped}\n.fi\n`;
}

/** `fast` compresses with gzip -1 instead of xz (tests build several versions). */
export async function buildDebianPackage(options: { version?: string; fast?: boolean; log?: (line: string) => void } = {}): Promise<DebianPackage> {
  const log = options.log ?? ((line: string) => console.log(line));
  const version = options.version ?? (JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
  const architecture = debianArchitecture();
  const root = join(packageDir, `deb-root-${version}`);
  await rm(root, { recursive: true, force: true });
  for (const dir of ['DEBIAN', 'usr/bin', 'lib/systemd/system', 'etc/default', 'usr/share/man/man1', 'usr/share/doc/svc']) await mkdir(join(root, dir), { recursive: true, mode: 0o755 });
  await copyFile(executablePath, join(root, 'usr/bin/svc'));
  await chmod(join(root, 'usr/bin/svc'), 0o755);
  await symlink('svc', join(root, 'usr/bin/svc-rc'));
  await copyFile(join(debianDir, 'svc.service'), join(root, 'lib/systemd/system/svc.service'));
  await copyFile(join(debianDir, 'default'), join(root, 'etc/default/svc'));
  const { stdout: help } = await run(executablePath, ['--help'], { env: { PATH: '/usr/bin:/bin' } });
  await writeFile(join(root, 'usr/share/man/man1/svc.1.gz'), gzipSync(manualPage(help, version), { level: 9 }));
  await writeFile(join(root, 'usr/share/doc/svc/copyright'), 'svc is licensed under the Apache License, Version 2.0 (/usr/share/common-licenses/Apache-2.0).\n');
  for (const script of ['postinst', 'prerm', 'postrm']) {
    await copyFile(join(debianDir, script), join(root, 'DEBIAN', script));
    await chmod(join(root, 'DEBIAN', script), 0o755);
  }
  await copyFile(join(debianDir, 'conffiles'), join(root, 'DEBIAN/conffiles'));
  const installedKib = Math.ceil((await stat(executablePath)).size / 1024) + 16;
  const control = (await readFile(join(debianDir, 'control'), 'utf8')).replace('@VERSION@', version).replace('@ARCH@', architecture).replace('@SIZE@', String(installedKib));
  await writeFile(join(root, 'DEBIAN/control'), control);
  const path = join(packageDir, `svc_${version}_${architecture}.deb`);
  log(`building ${path}`);
  await run('dpkg-deb', ['--root-owner-group', ...(options.fast ? ['-Zgzip', '-z1'] : ['-Zxz']), '--build', root, path], { maxBuffer: 16 * 1024 * 1024 });
  const sizeBytes = (await stat(path)).size;
  await rm(root, { recursive: true, force: true });
  log(`${path}: ${(sizeBytes / 2 ** 20).toFixed(1)} MiB`);
  return { path, version, sizeBytes };
}
