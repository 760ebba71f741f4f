/**
 * `svc plan <pattern>... [--drive-size <size>] [--json]`: the layout planner. Same arguments and
 * environment as `svc server`; starts nothing and touches no drive. Prints the pools, sets and how
 * they spread over hosts, parity per storage class, usable capacity, failures tolerated, and the
 * warnings the server would log, or the rejection exactly as the server would report it (exit 1).
 */
import { planLaunch, type LaunchPlan, type PoolPlan } from '../cluster/launch-plan.js';
import { formatBytes, parseByteSize } from '../util/sizes.js';

export interface PlanOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export const planUsage = `usage: svc plan <endpoint-pattern> [<endpoint-pattern> ...] [--drive-size <size>] [--json]
  The launch's validation and layout, offline: what \`svc server\` would do with these arguments
  and this environment (SVC_VOLUMES, SVC_ERASURE_SET_DRIVE_COUNT, SVC_STORAGE_CLASS_*, ...).
  --drive-size 8TiB   also print usable bytes for drives of this size`;

export function runPlan(argv: string[], env: Record<string, string | undefined>): PlanOutput {
  const args: string[] = [];
  let json = false;
  let driveSizeBytes: number | undefined;
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index]!;
    if (argument === '--json') json = true;
    else if (argument === '--help' || argument === '-h') return { exitCode: 0, stdout: `${planUsage}\n`, stderr: '' };
    else if (argument === '--drive-size' || argument.startsWith('--drive-size=')) {
      const value = argument.includes('=') ? argument.slice(argument.indexOf('=') + 1) : argv[++index];
      if (value === undefined) return { exitCode: 2, stdout: '', stderr: `svc plan: --drive-size needs a size such as 8TiB\n${planUsage}\n` };
      try {
        driveSizeBytes = parseByteSize(value);
      } catch (error) {
        return { exitCode: 2, stdout: '', stderr: `svc plan: --drive-size: ${(error as Error).message}\n` };
      }
    } else if (argument.startsWith('--')) return { exitCode: 2, stdout: '', stderr: `svc plan: unknown option '${argument}'\n${planUsage}\n` };
    else args.push(argument);
  }
  const plan = planLaunch(args, env, driveSizeBytes === undefined ? {} : { driveSizeBytes });
  const exitCode = plan.accepted ? 0 : 1;
  if (json) return { exitCode, stdout: `${JSON.stringify(plan, null, 2)}\n`, stderr: '' };
  if (!plan.accepted) return { exitCode, stdout: '', stderr: `${plan.rejection.line}\n${plan.rejection.rule ? `rule: ${plan.rejection.rule}\n` : ''}` };
  return { exitCode, stdout: describePlan(plan), stderr: '' };
}

function describePlan(plan: Extract<LaunchPlan, { accepted: true }>): string {
  const lines = [`accepted: ${plan.pools.length} pool(s)${plan.singleDrive ? ', single-drive layout (no redundancy)' : ''}`];
  for (const pool of plan.pools) lines.push(...describePool(pool));
  if (plan.usableBytes !== undefined) lines.push(`capacity: ${formatBytes(plan.rawBytes!)} raw, ${formatBytes(plan.usableBytes)} usable for STANDARD objects`);
  lines.push(plan.warnings.length === 0 ? 'warnings the server would log: none' : 'warnings the server would log:');
  for (const warning of plan.warnings) lines.push(`  ${warning.message}`);
  return `${lines.join('\n')}\n`;
}

function describePool(pool: PoolPlan): string[] {
  const lines = [`pool ${pool.index}: ${pool.pattern}`, `  ${pool.drives} drive(s) on ${pool.hosts} host(s): ${pool.setCount} set(s) of ${pool.setDriveCount}`];
  for (const set of pool.sets) lines.push(`  set ${set.set}: ${set.hosts.map((host) => `${host.host} x${host.drives}`).join(', ')}`);
  for (const entry of pool.classes) {
    const usable = `usable ${(entry.usableFraction * 100).toFixed(1)}%${entry.usableBytes !== undefined ? ` (${formatBytes(entry.usableBytes)})` : ''}`;
    const tolerates = `per set tolerates ${drives(entry.tolerates.readDrives)} failed for reads, ${drives(entry.tolerates.writeDrives)} for writes, ${entry.tolerates.readHosts} host(s) for reads`;
    lines.push(`  ${entry.storageClass} EC:${entry.parity} (K=${entry.dataShards}, M=${entry.parity}): ${usable}; ${tolerates}`);
  }
  return lines;
}

function drives(count: number): string {
  return count < 0 ? 'no drive' : `${count} drive(s)`;
}
