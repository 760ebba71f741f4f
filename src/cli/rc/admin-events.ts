/** `rc admin event target ls`: the bucket notification targets of the node the alias points at, with their queues. */
import { table, type RcContext } from './context.js';

export async function eventTargets(context: RcContext, aliasName: string): Promise<void> {
  const alias = await context.alias(aliasName);
  const answer = await context.admin(alias, 'GET', '/svc/admin/v4/event/targets');
  context.print(answer, () => describe(answer.targets as Record<string, any>[]));
}

function describe(targets: Record<string, any>[]): string {
  if (targets.length === 0) return 'no event target is configured on this node (SVC_NOTIFY_<TYPE>_ENABLE_<ID>=on sets one)';
  const rows = targets.map((target) => [
    target.arn, target.type, Object.entries(target.settings as Record<string, string>).map(([name, value]) => `${name}=${value}`).join(' '),
    `${target.queued}/${target.queueLimit}`, `${Math.round(target.oldestAgeSeconds)}s`, target.sent, target.failed, target.dropped, target.quarantined,
  ]);
  const lines = [table(['ARN', 'TYPE', 'SETTINGS', 'QUEUED', 'OLDEST', 'SENT', 'FAILED', 'DROPPED', 'QUARANTINED'], rows)];
  for (const target of targets) if (target.lastError !== null) lines.push(`${target.arn}: last delivery failed: ${target.lastError}`);
  return lines.join('\n');
}
