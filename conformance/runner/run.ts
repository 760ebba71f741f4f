/** Runs checks against a target, one after another, with progress, and builds the report. */
import { CheckFailure, NotApplicable, Skip, Target, profileOf, sourceOf, type Check, type Profile, type TargetOptions } from './check.js';
import { explanation, type CheckResult, type Report } from './report.js';
import { notApplicableReason, probeCapabilities } from './capabilities.js';

const outcomeLabel: Record<CheckResult['outcome'], string> = { passed: 'pass', failed: 'FAIL', skipped: 'skip', 'not-applicable': 'n/a ' };

export interface SuiteRun {
  suite: string;
  checks: Check[];
}

/** The checks of the suites that belong to `profile` (all of them for 'all'); suites left empty are dropped. */
export function selectProfile(suites: SuiteRun[], profile: Profile | 'all' = 'all'): SuiteRun[] {
  if (profile === 'all') return suites;
  return suites.map((suite) => ({ ...suite, checks: suite.checks.filter((check) => profileOf(check) === profile) })).filter((suite) => suite.checks.length > 0);
}

/**
 * Runs the suites in order (only the checks of `profile` when given). With `skipProbe: true`
 * (managed suites alone: they launch what they test) nothing is probed at the endpoint and the
 * report lists no capabilities. A failure is reported with the check's last request, the answer,
 * what was expected and the source.
 */
export async function runSuites(options: TargetOptions & { allowAdminMutations: boolean; skipProbe?: boolean; profile?: Profile | 'all'; progress?: (line: string) => void }, allSuites: SuiteRun[]): Promise<Report> {
  const started = Date.now();
  const { skipProbe, profile, ...targetOptions } = options;
  const suites = selectProfile(allSuites, profile);
  const target = new Target({ probe: probeCapabilities, ...targetOptions });
  const results: CheckResult[] = [];
  const notes: string[] = [];
  const capabilities = skipProbe ? undefined : await target.capabilities();
  for (const [name, state] of Object.entries(capabilities ?? {})) options.progress?.(`probe ${name}: ${state.present ? 'yes' : 'no'} (${state.detail})`);
  const total = suites.reduce((sum, suite) => sum + suite.checks.length, 0);
  let index = 0;
  for (const suite of suites) {
    for (const check of suite.checks) {
      index += 1;
      const begun = Date.now();
      let outcome: CheckResult['outcome'] = 'passed';
      let message: string | undefined;
      let explained: Pick<CheckResult, 'request' | 'answer' | 'expected'> = {};
      target.lastExchange = {};
      const lacking = capabilities ? notApplicableReason(check.needs, capabilities) : undefined;
      if (lacking) {
        outcome = 'not-applicable';
        message = lacking;
      } else if (check.mutates && !options.allowAdminMutations) {
        outcome = 'skipped';
        message = 'changes cluster-wide state; run with --allow-admin-mutations';
      } else {
        try {
          await check.run(target);
        } catch (error) {
          if (error instanceof Skip) {
            outcome = 'skipped';
            message = error.message;
          } else if (error instanceof NotApplicable) {
            outcome = 'not-applicable';
            message = `the probe found it absent: ${error.probe}`;
          } else {
            outcome = 'failed';
            message = error instanceof CheckFailure ? error.message : `${(error as Error).name ?? 'Error'}: ${(error as Error).message}`;
            explained = { ...target.lastExchange, expected: check.title };
          }
        }
      }
      const source = sourceOf(check);
      const result: CheckResult = { id: check.id, spec: check.spec, title: check.title, suite: suite.suite, profile: profileOf(check), ...(source ? { source } : {}), outcome, ...(message !== undefined ? { message } : {}), ...explained, durationMs: Date.now() - begun };
      results.push(result);
      options.progress?.(`[${index}/${total}] ${outcomeLabel[outcome]}  ${check.id}${message ? ` — ${message}` : ''}`);
      if (outcome === 'failed') for (const line of explanation(result).slice(message ? 1 : 0)) options.progress?.(`        ${line}`);
    }
  }
  for (const problem of await target.cleanup()) notes.push(`cleanup: ${problem}`);
  return { target: options.endpoint, seed: options.seed, profile: profile ?? 'all', startedAt: new Date(started).toISOString(), durationMs: Date.now() - started, results, notes, ...(capabilities ? { capabilities } : {}) };
}
