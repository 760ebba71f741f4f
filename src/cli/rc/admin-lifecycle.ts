/** `rc admin lifecycle status|run`: the lifecycle scanner of the node the alias points at. */
import { RcError, table, type RcContext } from './context.js';
import { follow } from './admin.js';

const base = '/svc/admin/v4/lifecycle';

export async function lifecycle(context: RcContext, action: string, aliasName: string, watch: boolean): Promise<void> {
  if (action !== 'status' && action !== 'run') throw new RcError(`unknown lifecycle action '${action}' (status, run)`, 2);
  const alias = await context.alias(aliasName);
  if (action === 'run') {
    await context.admin(alias, 'POST', `${base}/run`);
    if (!watch) {
      context.print({ started: true }, () => `lifecycle cycle started (rc admin lifecycle status ${aliasName} --watch follows it)`);
      return;
    }
  }
  const status = async () => context.admin(alias, 'GET', `${base}/status`);
  const answer = watch || action === 'run'
    ? await follow(context, 'lifecycle', status, (value) => value.running === true, (value) => ({ done: Number(value.current?.objectsScanned ?? value.last?.objectsScanned ?? 0), total: 0 }))
    : await status();
  context.print(answer, () => describe(answer));
}

function describe(status: Record<string, any>): string {
  const lines = [`lifecycle scanner: ${status.running ? 'running' : 'idle'}, ${status.objectsPerSecond} objects/s at most, every ${Math.round(status.intervalMs / 1000)}s${status.nextCycleAt ? `, next cycle ${status.nextCycleAt}` : ''}`];
  const cycles = [['current', status.current], ['last', status.last]].filter(([, cycle]) => cycle);
  if (cycles.length === 0) return [...lines, 'no cycle has run yet'].join('\n');
  lines.push(
    table(
      ['CYCLE', 'TRIGGER', 'STARTED', 'FINISHED', 'BUCKETS', 'OBJECTS', 'EXPIRED', 'NONCURRENT', 'MARKERS', 'UPLOADS', 'RESTORES ENDED', 'LOCKED KEPT', 'ERRORS'],
      cycles.map(([name, cycle]) => [name, cycle.trigger, cycle.startedAt, cycle.finishedAt ?? '-', cycle.bucketsScanned, cycle.objectsScanned, cycle.expired.currentVersions, cycle.expired.noncurrentVersions, cycle.expired.deleteMarkers, cycle.expired.multipartUploads, cycle.restoredCopiesEnded ?? 0, cycle.lockedVersionsKept, cycle.errors]),
    ),
  );
  for (const [name, cycle] of cycles) if (cycle.repairWalk) lines.push(`${name} cycle: every key of every bucket walked to rebuild a restored-copy index`);
  for (const [, cycle] of cycles) for (const error of cycle.recentErrors as string[]) lines.push(`error: ${error}`);
  return lines.join('\n');
}
