/**
 * Reading what the metrics endpoints expose (a small parser of the Prometheus text format) and
 * getting a scrape configuration the way an operator does: `rc alias set`, then
 * `rc admin prometheus generate`.
 */
import { runRc } from './rc-process.js';
import { testCredentials } from './server-process.js';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const samplePattern = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const labelPattern = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Families by name; a sample belongs to the family declared last above it (histogram _bucket/_sum/_count included). */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  let current: Family | undefined;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const header = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (header) {
      current = families.get(header[2]!) ?? { name: header[2]!, type: 'untyped', help: '', samples: [] };
      families.set(current.name, current);
      if (header[1] === 'TYPE') current.type = header[3]!;
      else current.help = header[3]!;
      continue;
    }
    const match = samplePattern.exec(line);
    if (!match || !current) throw new Error(`not a sample line of the text format: ${line}`);
    if (!match[1]!.startsWith(current.name)) throw new Error(`sample ${match[1]} under family ${current.name}`);
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(labelPattern)) labels[label[1]!] = label[2]!;
    current.samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return families;
}

/** The one sample of `name` whose labels include `labels` (throws when none or several match). */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const matching = [...families.values()].flatMap((family) => family.samples).filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value));
  if (matching.length !== 1) throw new Error(`${matching.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return matching[0]!.value;
}

export interface GeneratedScrapeConfig {
  jobName: string;
  bearerToken: string;
  metricsPath: string;
  scheme: string;
  target: string;
  /** The YAML `rc` prints for people. */
  yaml: string;
}

/** `rc alias set` with the test credentials, then `rc admin prometheus generate` (JSON and YAML). */
export async function generateScrapeConfig(home: string, url: string, view: 'cluster' | 'node' = 'cluster'): Promise<GeneratedScrapeConfig> {
  const alias = await runRc(home, ['alias', 'set', 'metrics', url, testCredentials.accessKeyId, testCredentials.secretAccessKey]);
  if (alias.code !== 0) throw new Error(`rc alias set failed: ${alias.stderr}`);
  const json = await runRc(home, ['admin', 'prometheus', 'generate', 'metrics', view, '--json']);
  const yaml = await runRc(home, ['admin', 'prometheus', 'generate', 'metrics', view]);
  if (json.code !== 0 || yaml.code !== 0) throw new Error(`rc admin prometheus generate failed: ${json.stderr}${yaml.stderr}`);
  return { ...(JSON.parse(json.stdout) as Omit<GeneratedScrapeConfig, 'yaml'>), yaml: yaml.stdout };
}
