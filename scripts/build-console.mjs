// Builds the web console (src/console/ui, browser TypeScript with Preact) into dist/console-ui/:
// one bundled, minified app.js, the stylesheet and index.html. Nothing is fetched at run time.
// Plain JavaScript so that `npm install` (prepare) can run it with esbuild alone.
import { build } from 'esbuild';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const source = `${root}src/console/ui/`;
const target = `${root}dist/console-ui/`;

await rm(target, { recursive: true, force: true });
await mkdir(target, { recursive: true });
await build({
  entryPoints: [`${source}main.tsx`],
  bundle: true,
  minify: true,
  sourcemap: false,
  format: 'esm',
  target: ['es2022'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outfile: `${target}app.js`,
  legalComments: 'none',
  logLevel: 'warning',
});
for (const name of ['index.html', 'app.css', 'favicon.svg']) await copyFile(`${source}${name}`, `${target}${name}`);
// The runbooks, linked from the health banner, served as text with the app.
await copyFile(`${root}docs/runbooks.md`, `${target}runbooks.md`);
