/**
 * Slow and hung drives under concurrent clients: a four-node cluster of real processes (two drives
 * a node, one set of eight, EC:4) with fault injection on. After a healthy phase one drive, drawn
 * from the seed, answers every call 2 s late (`slow-drive`: it stays online, within its deadline)
 * or never (`hung-drive`: its first calls miss the 3 s deadline set here, it is taken offline and
 * probed until it answers); then it recovers. The history of concurrent clients is judged by the
 * linearizability checker (recorded-phases.ts), listings must hold every acknowledged key, and
 * the closing heal must leave full redundancy. Each phase's GET latency (median, p99, slowest)
 * goes in the timeline: what a slow drive costs readers, to compare in one run.
 */
import { startProcessCluster } from '../harness/process-cluster.js';
import { runRecordedPhases } from './recorded-phases.js';
import type { Tally } from './history-checker.js';
import { driveList, faultDrive, targetFor, type ChaosContext } from './steps.js';

export const driveFaultKinds = ['slow-drive', 'hung-drive'] as const;
export type DriveFaultKind = (typeof driveFaultKinds)[number];

/** Every read of the slow drive waits this long. */
const slowMs = 2_000;
/** The drive deadline the nodes run with: a hung drive costs this once, then nothing until it answers. */
const deadline = '3s';

export function driveFaultScenario(kind: DriveFaultKind) {
  return async (context: ChaosContext): Promise<{ problems: string[]; checker: Tally }> => {
    const cluster = await startProcessCluster({ nodes: 4, drivesPerNode: 2, env: { SVC_CONSOLE_ENABLE: 'false', SVC_FAULT_INJECTION: 'on', SVC_DRIVE_MAX_TIMEOUT: deadline } });
    try {
      const owner = context.prng.int(4);
      const target = targetFor(cluster.urls[owner]!, context.seed);
      const drives = await driveList(target);
      const drive = drives[context.prng.int(drives.length)]!;
      const plan = kind === 'slow-drive' ? { operations: { '*': { latencyMs: slowMs } } } : { operations: { '*': { hang: true } } };
      const names = cluster.nodes.map((_, index) => `node ${index + 1}`);
      const result = await runRecordedPhases(context, cluster.nodes.map((node) => node!), names, [
        { name: 'healthy' },
        {
          name: kind === 'slow-drive' ? 'one drive slow' : 'one drive hung',
          before: async () => {
            await faultDrive(target, drive, plan);
            return kind === 'slow-drive' ? `node ${owner + 1}'s drive ${drive} answers every call ${slowMs} ms late` : `node ${owner + 1}'s drive ${drive} answers no call (deadline ${deadline})`;
          },
        },
        {
          name: 'recovered',
          before: async () => {
            await faultDrive(target, drive, {});
            return `node ${owner + 1}'s drive ${drive} answers again`;
          },
        },
      ]);
      return { problems: result.problems, checker: { acknowledged: result.acknowledged, refused: result.refused, refusals: new Map(Object.entries(result.refusals)) } };
    } finally {
      await cluster.destroy();
    }
  };
}
