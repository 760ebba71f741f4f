/**
 * `node --import tsx scripts/conformance-results.ts`: runs the black-box suites s3, admin and
 * model against svc (a two-node, two-pool process cluster from the build), s3rver and fauxqs, and
 * rewrites the results table of docs/conformance.md and the check counts of docs/conformance.md
 * and README.md between their markers. test/conformance.test.ts compares each column with a fresh
 * run, and test/conformance-counts.test.ts the counts with the suites.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSuites } from '../conformance/runner/run.js';
import type { Report } from '../conformance/runner/report.js';
import { countsMarkers, countsTable, replaceBetween, resultsMarkers, resultsTable, resultsTargets } from '../conformance/runner/results-table.js';
import { s3Checks } from '../conformance/suites/s3.js';
import { adminChecks } from '../conformance/suites/admin.js';
import { iamChecks } from '../conformance/suites/iam.js';
import { modelChecks } from '../conformance/model/s3-model-run.js';
import { startProcessCluster } from '../conformance/harness/process-cluster.js';
import { repoRoot, testCredentials } from '../conformance/harness/server-process.js';
import { s3rverCredentials, startS3rver } from '../conformance/harness/s3rver-process.js';
import { fauxqsCredentials, fauxqsUnavailable, startFauxqs } from '../conformance/harness/fauxqs-process.js';
import { conformanceKmsEnv, conformanceKmsKeyId, createConformanceKmsKey } from '../conformance/harness/kms.js';

const blackBox = [
  { suite: 's3', checks: s3Checks },
  { suite: 'admin', checks: adminChecks },
  { suite: 'model', checks: modelChecks },
];
const progress = (line: string) => process.stderr.write(`${line}\n`);
const run = (endpoint: string, credentials: { accessKey: string; secretKey: string }, target: { seed: number; runs: number }, encryption = {}) => runSuites({ endpoint, ...credentials, seed: target.seed, runs: target.runs, allowAdminMutations: true, ...encryption }, blackBox);

const reports: { name: string; report: Report }[] = [];
// With a KMS and customer keys over HTTP, so that the encryption checks apply (as in test/conformance.test.ts).
const cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2, poolPaths: ['/p0/d{1...2}', '/p1/d{1...2}'], env: conformanceKmsEnv() });
try {
  progress('svc');
  const svcCredentials = { accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey };
  await createConformanceKmsKey(cluster.urls[0]!, svcCredentials);
  reports.push({ name: resultsTargets.svc.name, report: await run(cluster.urls[1]!, svcCredentials, resultsTargets.svc, { kmsKeyId: conformanceKmsKeyId, ssecOverHttp: true }) });
} finally {
  await cluster.destroy();
}
const root = await mkdtemp(join(tmpdir(), 'svc-results-s3rver-'));
const s3rver = await startS3rver(root);
try {
  progress('s3rver');
  reports.push({ name: resultsTargets.s3rver.name, report: await run(s3rver.url, s3rverCredentials, resultsTargets.s3rver) });
} finally {
  await s3rver.stop();
  await rm(root, { recursive: true, force: true });
}
const fauxqsMissing = await fauxqsUnavailable();
if (fauxqsMissing) throw new Error(`fauxqs is needed for the results table: ${fauxqsMissing}`);
const fauxqs = await startFauxqs();
try {
  progress('fauxqs');
  reports.push({ name: resultsTargets.fauxqs.name, report: await run(fauxqs.url, fauxqsCredentials, resultsTargets.fauxqs) });
} finally {
  await fauxqs.stop();
}

const counts = countsTable([...blackBox.slice(0, 2), { suite: 'iam', checks: iamChecks }, blackBox[2]!]);
const docs = join(repoRoot, 'docs/conformance.md');
await writeFile(docs, replaceBetween(replaceBetween(await readFile(docs, 'utf8'), resultsMarkers, resultsTable(reports)), countsMarkers, counts));
const readme = join(repoRoot, 'README.md');
await writeFile(readme, replaceBetween(await readFile(readme, 'utf8'), countsMarkers, counts));
progress('docs/conformance.md and README.md rewritten');
