/**
 * Managed suites: the harness launches what it tests (processes or containers), so it can take
 * drives offline (the fault-control route), look at disks, launch invalid layouts and restart
 * nodes. Each is a property suite (property.ts): fast-check draws its cases from the run's seed.
 * The expected outcomes come from SPEC.md's formulas and rules, not from the implementation.
 */
import { runSuites, type SuiteRun } from '../runner/run.js';
import type { Report } from '../runner/report.js';
import type { Check, Profile } from '../runner/check.js';
import { testCredentials } from '../harness/server-process.js';
import { startProcessCluster } from '../harness/process-cluster.js';
import { s3Checks } from '../suites/s3.js';
import { adminChecks } from '../suites/admin.js';
import { iamChecks } from '../suites/iam.js';
import { containerLauncher, processLauncher, type Launcher } from './deployment.js';
import { propertyCheck, type PropertySuite } from './property.js';
import { quorumSuite } from './quorum.js';
import { inlineSuite } from './inline.js';
import { layoutSuite } from './layout.js';
import { recoverySuite } from './recovery.js';
import { exclusionSuite } from './exclusion.js';
import { overTimeSuite } from './over-time.js';

/** The managed property suites by name (`--suite quorum,inline,...`). */
export const managedPropertySuites: Record<string, PropertySuite<any>> = {
  quorum: quorumSuite,
  inline: inlineSuite,
  layout: layoutSuite,
  recovery: recoverySuite,
  exclusion: exclusionSuite,
  'over-time': overTimeSuite,
};

/** One suite run per named property suite, its check bound to `launcher`. */
export function managedSuiteRuns(launcher: Launcher, options: { names?: string[]; runs?: number; progress?: (line: string) => void } = {}): SuiteRun[] {
  const names = options.names ?? Object.keys(managedPropertySuites);
  return names.map((name) => {
    const suite = managedPropertySuites[name];
    if (!suite) throw new Error(`unknown managed suite '${name}' (managed suites: ${Object.keys(managedPropertySuites).join(', ')})`);
    const check: Check = propertyCheck(suite, launcher, { ...(options.runs !== undefined ? { runs: options.runs } : {}), ...(options.progress ? { progress: options.progress } : {}) });
    return { suite: name, checks: [check] };
  });
}

/**
 * Runs the wanted suites on the chosen harness: the black-box ones (s3, admin, iam) against a two-node,
 * two-pool cluster it starts (mutations allowed), the managed property suites on deployments they
 * launch themselves, `runs` cases each (default: each suite's own).
 */
export async function managedSuites(options: { harness: 'process' | 'container'; seed: number; runs?: number; suites?: string[]; profile?: Profile | 'all'; progress?: (line: string) => void }): Promise<Report> {
  const wanted = (name: string) => !options.suites || options.suites.includes(name);
  const blackBox: SuiteRun[] = [
    { suite: 's3', checks: s3Checks },
    { suite: 'admin', checks: adminChecks },
    { suite: 'iam', checks: iamChecks },
  ].filter((suite) => wanted(suite.suite));
  let image: string | undefined;
  if (options.harness === 'container') {
    const { buildImages } = await import('../../scripts/build-image.js');
    image = (await buildImages({ log: () => undefined })).project;
  }
  const launcher = image ? containerLauncher(image) : processLauncher();
  const managed = managedSuiteRuns(launcher, { names: Object.keys(managedPropertySuites).filter(wanted), ...(options.runs !== undefined ? { runs: options.runs } : {}), ...(options.progress ? { progress: options.progress } : {}) });
  const run = (endpoint: string, probe: boolean) =>
    runSuites(
      { endpoint, accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey, seed: options.seed, allowAdminMutations: true, ...(options.profile ? { profile: options.profile } : {}), ...(probe ? {} : { skipProbe: true }), ...(options.progress ? { progress: options.progress } : {}) },
      [...blackBox, ...managed],
    );
  if (blackBox.length === 0) return run('http://127.0.0.1:0', false);
  const poolPaths = ['/p0/d{1...2}', '/p1/d{1...2}'];
  let endpoint: string;
  let destroy: () => Promise<void>;
  if (image) {
    const { startContainerCluster } = await import('../harness/container-cluster.js');
    const cluster = await startContainerCluster({ image, nodes: 2, drivesPerNode: 2, poolPaths });
    endpoint = cluster.urls[0]!;
    destroy = () => cluster.destroy();
  } else {
    const cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2, poolPaths });
    endpoint = cluster.urls[0]!;
    destroy = () => cluster.destroy();
  }
  try {
    return await run(endpoint, true);
  } finally {
    await destroy();
  }
}
