// Builds the standalone conformance package: conformance/bin.ts bundled by esbuild with every
// dependency into one file (the package depends on nothing), conformance/package.json and a
// README, packed by `npm pack` into build/conformance/svc-conformance-<version>.tgz. Managed runs
// (which start svc from this repository) are left out: the bundle answers --managed with a message.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, readFile, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stage = `${root}build/conformance/package/`;
const out = `${root}build/conformance/`;

await rm(stage, { recursive: true, force: true });
await mkdir(`${stage}dist`, { recursive: true });
await build({
  entryPoints: [`${root}conformance/bin.ts`],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: ['node22'],
  outfile: `${stage}dist/svc-conformance.mjs`,
  banner: { js: "#!/usr/bin/env node\nimport { createRequire as svcConformanceRequire } from 'node:module';\nconst require = svcConformanceRequire(import.meta.url);" },
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [
    {
      name: 'without-managed-runs',
      setup(context) {
        context.onResolve({ filter: /\/managed\/suites\.js$/ }, (args) => ({ path: args.path, external: true }));
      },
    },
  ],
});
await copyFile(`${root}conformance/package.json`, `${stage}package.json`);
await copyFile(`${root}conformance/README.md`, `${stage}README.md`);
const { name, version } = JSON.parse(await readFile(`${stage}package.json`, 'utf8'));
execFileSync('npm', ['pack', '--silent', '--pack-destination', out], { cwd: stage, stdio: ['ignore', 'ignore', 'inherit'] });
console.log(`${out}${name}-${version}.tgz`);
