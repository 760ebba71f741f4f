/**
 * `npm run package`: svc as one executable file, dist-package/svc, made with Node's
 * single-executable-application support. esbuild bundles the server, `svc plan` and `svc rc ...`
 * (src/cli/one.ts) and the modules run as threads into ES modules; these, the web console's files and the
 * version go into the executable as assets, beside a small start-up script that runs the bundle.
 * The WebAssembly modules (the Reed-Solomon kernel, xxHash) are inside the bundle. The result
 * needs no Node.js, no node_modules and no checkout.
 *
 * `--deb` also builds the Debian package (scripts/package-deb.ts).
 */
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { executablePath, packageDir, repoRoot } from './package-paths.js';

const run = promisify(execFile);
export { executablePath, packageDir, repoRoot };
const sentinelFuse = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/** Bundled modules get `require` for the CommonJS dependencies that ask for Node's built-ins. */
const requireBanner = "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(process.execPath);";

/** The start-up script: runs the embedded bundle as an ES module (it uses top-level await). */
const startScript = `'use strict';
const { getAsset } = require('node:sea');
const vm = require('node:vm');
const emitWarning = process.emitWarning;
process.emitWarning = (warning, ...rest) => (String(warning).includes('USE_MAIN_CONTEXT_DEFAULT_LOADER') ? undefined : emitWarning.call(process, warning, ...rest));
const url = 'data:text/javascript;base64,' + Buffer.from(getAsset('svc.mjs')).toString('base64');
const script = new vm.Script('import(' + JSON.stringify(url) + ')', { importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
script.runInThisContext().catch((error) => { console.error(error); process.exit(1); });
`;

async function bundle(entry: string, outfile: string): Promise<void> {
  await build({
    entryPoints: [join(repoRoot, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minify: true,
    legalComments: 'none',
    banner: { js: requireBanner },
    // Optional native add-ons some clients try first and do without.
    external: ['pg-native', 'bufferutil', 'utf-8-validate'],
    logLevel: 'warning',
  });
}

/** The modules the server starts as threads (src/util/threads.ts), by the name they are started under. */
const threadModules: Record<string, string> = {
  'coding-worker': 'src/object/coding/coding-worker.ts',
  'read-thread': 'backends/fs/read-thread.ts',
};

export interface PackageResult {
  executable: string;
  sizeBytes: number;
}

export async function buildExecutable(log: (line: string) => void = (line) => console.log(line)): Promise<PackageResult> {
  const consoleDir = join(repoRoot, 'dist/console-ui');
  if (!existsSync(join(consoleDir, 'index.html'))) throw new Error('dist/console-ui/ (the web console) is missing: run `node scripts/build-console.mjs` or `npm run build` first');
  const work = join(packageDir, 'build');
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  log('bundling the server, the planner and rc');
  await bundle('src/cli/one.ts', join(work, 'svc.mjs'));
  for (const [name, entry] of Object.entries(threadModules)) await bundle(entry, join(work, `${name}.mjs`));
  await writeFile(join(work, 'start.cjs'), startScript);
  const version = (JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
  await writeFile(join(work, 'version'), `${version}\n`);
  const consoleFiles = (await readdir(consoleDir)).sort();
  await writeFile(join(work, 'console-ui.json'), JSON.stringify(consoleFiles));
  const assets: Record<string, string> = {
    'svc.mjs': join(work, 'svc.mjs'),
    ...Object.fromEntries(Object.keys(threadModules).map((name) => [`${name}.mjs`, join(work, `${name}.mjs`)])),
    version: join(work, 'version'),
    'console-ui.json': join(work, 'console-ui.json'),
  };
  for (const name of consoleFiles) assets[`console-ui/${name}`] = join(consoleDir, name);
  const blob = join(work, 'sea.blob');
  await writeFile(join(work, 'sea-config.json'), JSON.stringify({ main: join(work, 'start.cjs'), output: blob, disableExperimentalSEAWarning: true, useCodeCache: false, useSnapshot: false, assets }, null, 2));
  log('writing the executable');
  await run(process.execPath, ['--experimental-sea-config', join(work, 'sea-config.json')], { cwd: work });
  await rm(executablePath, { force: true });
  await copyFile(await realpath(process.execPath), executablePath);
  await chmod(executablePath, 0o755);
  const postject = join(repoRoot, 'node_modules/postject/dist/cli.js');
  await run(process.execPath, [postject, executablePath, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', sentinelFuse], { maxBuffer: 16 * 1024 * 1024 });
  const sizeBytes = (await stat(executablePath)).size;
  log(`${executablePath}: ${(sizeBytes / 2 ** 20).toFixed(1)} MiB`);
  return { executable: executablePath, sizeBytes };
}

if (process.argv[1] && (await realpath(process.argv[1])) === (await realpath(fileURLToPath(import.meta.url)))) {
  await buildExecutable();
  if (process.argv.includes('--deb')) {
    const { buildDebianPackage } = await import('./package-deb.js');
    await buildDebianPackage();
  }
}
