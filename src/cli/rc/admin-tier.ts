/** `rc admin tier add|ls|info|rm`: the remote tiers lifecycle transitions move data to. */
import { RcError, table, type RcContext } from './context.js';
import type { TierDeletionNodeRow, TierDeletionTotals } from '../../contracts/tiers.js';

const base = '/svc/admin/v4/tier';

export interface TierAddOptions {
  endpoint?: string;
  bucket?: string;
  prefix?: string;
  region?: string;
  accessKey?: string;
  secretKey?: string;
}

export async function tierAdd(context: RcContext, aliasName: string, name: string, options: TierAddOptions): Promise<void> {
  const missing = (['endpoint', 'bucket', 'accessKey', 'secretKey'] as const).filter((field) => options[field] === undefined);
  if (missing.length > 0) throw new RcError(`rc admin tier add needs ${missing.map((field) => `--${field.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`).join(', ')}`, 2);
  const alias = await context.alias(aliasName);
  const body = { name, endpoint: options.endpoint, bucket: options.bucket, accessKey: options.accessKey, secretKey: options.secretKey, ...(options.prefix !== undefined ? { prefix: options.prefix } : {}), ...(options.region !== undefined ? { region: options.region } : {}) };
  const answer = await context.admin(alias, 'POST', `${base}/add`, {}, JSON.stringify(body));
  context.print(answer, () => `added tier '${answer.tier.name}' (${answer.tier.endpoint}, bucket ${answer.tier.bucket})`);
}

export async function tierList(context: RcContext, aliasName: string): Promise<void> {
  const alias = await context.alias(aliasName);
  const answer = await context.admin(alias, 'GET', `${base}/list`);
  context.print(answer, () => ((answer.tiers as unknown[]).length === 0 ? 'no tiers' : table(['NAME', 'ENDPOINT', 'BUCKET', 'PREFIX', 'REGION'], (answer.tiers as Record<string, string>[]).map(row))));
}

export async function tierInfo(context: RcContext, aliasName: string, name: string): Promise<void> {
  const alias = await context.alias(aliasName);
  const answer = await context.admin(alias, 'GET', `${base}/info`, { tier: name });
  context.print(answer, () => {
    const tier = table(['NAME', 'ENDPOINT', 'BUCKET', 'PREFIX', 'REGION', 'ACCESS KEY', 'CREATED'], [[...row(answer.tier), answer.tier.accessKey, answer.tier.createdAt]]);
    const nodes = (answer.nodes ?? []) as TierDeletionNodeRow[];
    const totals = answer.deletions as TierDeletionTotals | undefined;
    if (!totals) return tier;
    const perNode = table(
      ['NODE', 'STATE', 'PENDING', 'OLDEST QUEUED', 'DELETED', 'FAILED', 'DROPPED', 'LAST ERROR'],
      nodes.map((node) =>
        node.state === 'answered'
          ? [node.node, node.state, node.pending, node.oldestQueuedAt ?? '-', node.deleted, node.failed, node.dropped, node.lastError ?? '-']
          : [node.node, node.state, '?', '?', '?', '?', '?', node.error],
      ),
    );
    const unreachable = totals.nodesUnreachable > 0 ? ` (${totals.nodesUnreachable} node${totals.nodesUnreachable === 1 ? '' : 's'} unreachable, not counted)` : '';
    const sum = `pending deletions on all nodes: ${totals.pending}${totals.oldestQueuedAt ? ` (oldest queued ${totals.oldestQueuedAt})` : ''}; deleted ${totals.deleted}, failed attempts ${totals.failed}, dropped ${totals.dropped}${unreachable}`;
    return `${tier}\n\n${perNode}\n${sum}`;
  });
}

export async function tierRemove(context: RcContext, aliasName: string, name: string): Promise<void> {
  const alias = await context.alias(aliasName);
  const answer = await context.admin(alias, 'POST', `${base}/remove`, { tier: name });
  context.print(answer, () => `removed tier '${answer.removed}'`);
}

function row(tier: Record<string, string>): string[] {
  return [tier.name!, tier.endpoint!, tier.bucket!, tier.prefix || '-', tier.region!];
}
