/**
 * `rc admin event target ls|add|rm`: the bucket notification targets of the deployment, with the
 * queues of the node the alias points at; targets added here reach every node at once and are kept
 * across restarts; those of the environment (SVC_NOTIFY_*) are shown as such and cannot be changed.
 */
import { RcError, table, type RcContext } from './context.js';

export async function eventTargets(context: RcContext, aliasName: string): Promise<void> {
  const alias = await context.alias(aliasName);
  const answer = await context.admin(alias, 'GET', '/svc/admin/v4/event/targets');
  context.print(answer, () => describe(answer.targets as Record<string, any>[]));
}

/** `add <alias> <type> <id> SETTING=value... [--queue-limit N]`: setting names as the environment's, in any letter case. */
export async function addEventTarget(context: RcContext, aliasName: string, type: string, id: string, assignments: string[], queueLimit: string | undefined): Promise<void> {
  const settings: Record<string, string> = {};
  for (const assignment of assignments) {
    const at = assignment.indexOf('=');
    if (at <= 0) throw new RcError(`settings are written NAME=value (endpoint=http://..., auth_token=...), not '${assignment}'`, 2);
    settings[assignment.slice(0, at).toUpperCase().replace(/-/g, '_')] = assignment.slice(at + 1);
  }
  if (queueLimit !== undefined && !/^\d+$/.test(queueLimit)) throw new RcError(`--queue-limit is a whole number of events, not '${queueLimit}'`, 2);
  const alias = await context.alias(aliasName);
  const body = JSON.stringify({ type: type.toLowerCase(), id, settings, ...(queueLimit !== undefined ? { queueLimit: Number(queueLimit) } : {}) });
  const answer = await context.admin(alias, 'POST', '/svc/admin/v4/event/target/add', {}, body);
  context.print(answer, () => `event target ${answer.arn} added on every node; a bucket's notification rule may name it now`);
}

export async function removeEventTarget(context: RcContext, aliasName: string, arn: string): Promise<void> {
  const alias = await context.alias(aliasName);
  const answer = await context.admin(alias, 'POST', '/svc/admin/v4/event/target/remove', { arn });
  context.print(answer, () => `event target ${arn} removed from every node`);
}

function describe(targets: Record<string, any>[]): string {
  if (targets.length === 0) return 'no event target is configured (rc admin event target add, or SVC_NOTIFY_<TYPE>_ENABLE_<ID>=on)';
  const rows = targets.map((target) => [
    target.arn, target.type, target.source === 'environment' ? 'env' : 'api', Object.entries(target.settings as Record<string, string>).map(([name, value]) => `${name}=${value}`).join(' '),
    `${target.queued}/${target.queueLimit}`, `${Math.round(target.oldestAgeSeconds)}s`, target.sent, target.failed, target.dropped, target.quarantined,
  ]);
  const lines = [table(['ARN', 'TYPE', 'FROM', 'SETTINGS', 'QUEUED', 'OLDEST', 'SENT', 'FAILED', 'DROPPED', 'QUARANTINED'], rows)];
  for (const target of targets) if (target.lastError !== null) lines.push(`${target.arn}: last delivery failed: ${target.lastError}`);
  return lines.join('\n');
}
