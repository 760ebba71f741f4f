/**
 * Import-direction rules (README "Layout of the code"). Layers may import only downwards:
 *   cli/main -> services -> api/* console -> ops -> cluster -> object -> erasure format iam -> drive transport -> errors util
 * iam/ (policies and their evaluator) is pure code like format/. transport/ is the internode
 * transport (framed streams, batches, tokens, the per-node pools): api/rpc serves it, cluster/ and
 * backends/remote call peers through it.
 * services/ composes the admin side of a running node from one factory per service (it names the
 * admin API's context types, so it sits above api/).
 * Backends implement Drive and see only drive, transport, errors and util; fault injection sees
 * only drive, errors and util.
 * contracts/ holds the answer shapes the server and the console's browser code share: it imports
 * nothing but itself (no other layer, no node module, no package), and every layer, the browser
 * code included, may import it.
 */
const layer = (name) => (name.endsWith('.ts') ? `^src/${name.replace(/\./g, '\\.')}$` : `^src/${name}/`);
const below = {
  'services': ['services', 'api', 'iam', 'ops', 'cluster', 'object', 'erasure', 'format', 'drive', 'transport', 'errors', 'util'],
  'api': ['iam', 'ops', 'cluster', 'object', 'erasure', 'format', 'drive', 'transport', 'errors', 'util', 'api'],
  // The console runs the admin API's own routes in-process (the same validation and errors),
  // judges a session's permissions with the S3 API's own access check (api/s3/access.ts), reads
  // request bodies as the S3 API does (api/s3/request-body.ts: the idle timeout, the drain); its
  // requests feed the audit log through api/audit-facts.ts and carry ids from api/request-line.ts.
  // Bucket settings run the S3 API's own handlers (api/s3/handlers, with api/s3/context.ts's request shape).
  'console': ['iam', 'ops', 'cluster', 'object', 'format', 'drive', 'errors', 'util', 'console', 'api/admin', 'api/s3/access.ts', 'api/s3/request-body.ts', 'api/audit-facts.ts', 'api/request-line.ts', 'api/s3/handlers', 'api/s3/context.ts'],
  'ops': ['iam', 'ops', 'cluster', 'object', 'erasure', 'format', 'drive', 'transport', 'errors', 'util'],
  'cluster': ['iam', 'cluster', 'object', 'erasure', 'format', 'drive', 'transport', 'errors', 'util'],
  'object': ['iam', 'object', 'erasure', 'format', 'drive', 'errors', 'util'],
  'erasure': ['erasure', 'errors', 'util'],
  'format': ['format', 'errors', 'util'],
  'iam': ['iam', 'errors', 'util'],
  'drive': ['drive', 'errors', 'util'],
  'transport': ['transport', 'errors', 'util'],
  'errors': ['errors'],
  'util': ['util', 'errors'],
  'contracts': ['contracts'],
};
const layerRules = Object.entries(below).map(([from, allowed]) => ({
  name: `layer-${from}`,
  comment: `src/${from} may import only from: ${allowed.join(', ')}`,
  severity: 'error',
  from: { path: layer(from) },
  to: { path: '^src/', pathNot: [...allowed, 'contracts'].map(layer) },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-pure-io',
      comment: 'src/erasure and src/format are pure: bytes in, bytes out (no fs, no net)',
      severity: 'error',
      from: { path: '^src/(erasure|format)/' },
      to: { dependencyTypes: ['core'], path: '^(fs|node:fs|fs/promises|node:fs/promises|net|node:net|http|node:http)$' },
    },
    {
      name: 'iam-is-pure',
      comment: 'src/iam judges policies: no file or network I/O (node:net only for its address helpers)',
      severity: 'error',
      from: { path: '^src/iam/' },
      to: { dependencyTypes: ['core'], path: '^(fs|node:fs|fs/promises|node:fs/promises|http|node:http)$' },
    },
    {
      name: 'backends-see-drive-and-transport-only',
      comment: 'a backend implements Drive; backends/remote reaches peers through the internode transport',
      severity: 'error',
      from: { path: '^backends/' },
      to: { path: '^src/', pathNot: ['^src/(drive|transport|errors|util)/'] },
    },
    {
      name: 'fault-injection-sees-drive-only',
      severity: 'error',
      from: { path: '^fault-injection/' },
      to: { path: '^src/', pathNot: ['^src/(drive|errors|util)/'] },
    },
    {
      name: 'src-is-self-contained',
      comment: 'nothing in src imports fault-injection, conformance or test: only the composition root (src/main.ts, src/cli) picks backends and wires fault control',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/cli/', '^src/main\\.ts$'] },
      to: { path: '^(fault-injection|conformance|test|backends)/' },
    },
    {
      name: 'contracts-import-nothing',
      comment: 'src/contracts is shared with the browser code: it imports nothing outside itself (no layer, no node module, no package)',
      severity: 'error',
      from: { path: '^src/contracts/' },
      to: { pathNot: '^src/contracts/' },
    },
    {
      name: 'console-ui-is-browser-code',
      comment: 'src/console/ui is built to static assets for the browser: it imports nothing from the server but the shared answer shapes (src/contracts)',
      severity: 'error',
      from: { path: '^src/console/ui/' },
      to: { path: '^src/', pathNot: ['^src/console/ui/', '^src/contracts/'] },
    },
    {
      name: 'server-does-not-import-ui',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/console/ui/'] },
      to: { path: '^src/console/ui/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
