/**
 * The self time of a V8 CPU profile (`node --cpu-prof`) by function, largest first:
 *
 *   node --import tsx bench/profile-summary.ts FILE.cpuprofile [--top=N]
 *
 * Each line: share of the sampled time, milliseconds, function, and where it is defined.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (!file) throw new Error('usage: profile-summary.ts FILE.cpuprofile [--top=N]');
const top = Number(process.argv.find((arg) => arg.startsWith('--top='))?.slice('--top='.length) ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfUs = new Map<string, number>();
let totalUs = 0;
profile.samples.forEach((id, index) => {
  const node = byId.get(id)!;
  const delta = profile.timeDeltas[index] ?? 0;
  const frame = node.callFrame;
  const name = `${frame.functionName || '(anonymous)'}  ${frame.url.replace(/^.*\/(src|backends|bench|node_modules)\//, '$1/')}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
  selfUs.set(name, (selfUs.get(name) ?? 0) + delta);
  totalUs += delta;
});
console.log(`${(totalUs / 1000).toFixed(0)} ms sampled`);
for (const [name, us] of [...selfUs].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${((us / totalUs) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${name}`);
}
