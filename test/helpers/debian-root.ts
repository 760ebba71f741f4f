/**
 * A fresh Debian root as a local Docker image, for installing the Debian package the way a new
 * machine would: `debootstrap --variant=minbase` of the running Debian release, imported with
 * `docker import` (no registry). Made once and kept as svc-debian:<suite>-minbase.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { toolPath } from './external-tools.js';

const run = promisify(execFile);

export async function debianSuite(): Promise<string> {
  const release = await readFile('/etc/os-release', 'utf8').catch(() => '');
  return /^VERSION_CODENAME=(\S+)/m.exec(release)?.[1] ?? 'bookworm';
}

async function imageExists(image: string): Promise<boolean> {
  return run('docker', ['image', 'inspect', image]).then(
    () => true,
    () => false,
  );
}

/** Undefined when the image exists or debootstrap can make it; otherwise why not (throws when required). */
export async function debianRootUnavailable(required: boolean): Promise<string | undefined> {
  if (await imageExists(`svc-debian:${await debianSuite()}-minbase`)) return undefined;
  const reason = toolPath('debootstrap') === undefined ? "'debootstrap' is not installed (Debian package debootstrap)" : process.getuid?.() !== 0 ? 'debootstrap needs root' : undefined;
  if (reason && required) throw new Error(`the Debian package test requires a Debian root: ${reason}`);
  return reason;
}

/** The image's name, after making it when it does not exist (a few minutes, once). */
export async function debianRootImage(mirror = process.env.SVC_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian'): Promise<string> {
  const suite = await debianSuite();
  const image = `svc-debian:${suite}-minbase`;
  if (await imageExists(image)) return image;
  const root = await mkdtemp(join(tmpdir(), 'svc-debootstrap-'));
  try {
    await run('debootstrap', ['--variant=minbase', suite, root, mirror], { maxBuffer: 64 * 1024 * 1024 });
    await new Promise<void>((resolve, reject) => {
      const tar = spawn('tar', ['-C', root, '--numeric-owner', '-c', '.'], { stdio: ['ignore', 'pipe', 'inherit'] });
      const importer = spawn('docker', ['import', '--change', 'CMD ["/bin/bash"]', '-', image], { stdio: ['pipe', 'ignore', 'inherit'] });
      tar.stdout.pipe(importer.stdin);
      importer.once('error', reject);
      importer.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`docker import of ${image} failed with ${code}`))));
    });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  return image;
}
