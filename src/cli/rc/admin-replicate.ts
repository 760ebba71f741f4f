/**
 * `rc admin replicate add|ls|rm|status|resync`: a bucket's remote replication targets, the
 * replication status of every node of the deployment (per node and summed), and a resync of existing objects (a
 * progress bar on a terminal with --watch). The remote bucket is written as MinIO's `mc` writes
 * it, `http(s)://ACCESS:SECRET@host:port/bucket`; its secret goes to the server once and is
 * never printed.
 */
import { RcError, formatBytes, table, type RcContext } from './context.js';
import { follow } from './admin.js';
import { requireTarget } from './objects.js';

const path = '/svc/admin/v4/replication';

export interface RemoteBucket {
  endpoint: string;
  targetBucket: string;
  accessKey: string;
  secretKey: string;
}

/** `http(s)://ACCESS:SECRET@host[:port]/bucket`, credentials percent-decoded. */
export function parseRemoteBucket(text: string): RemoteBucket {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RcError('--remote-bucket must be http(s)://ACCESS:SECRET@host:port/bucket', 2);
  }
  const targetBucket = url.pathname.replace(/^\/|\/$/g, '');
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username === '' || url.password === '' || targetBucket === '' || targetBucket.includes('/')) {
    throw new RcError('--remote-bucket must be http(s)://ACCESS:SECRET@host:port/bucket', 2);
  }
  return { endpoint: `${url.protocol}//${url.host}`, targetBucket, accessKey: decodeURIComponent(url.username), secretKey: decodeURIComponent(url.password) };
}

export async function replicateAdd(context: RcContext, text: string, remoteBucket: string, region: string | undefined): Promise<void> {
  const target = await requireTarget(context, text, 'bucket');
  const remote = parseRemoteBucket(remoteBucket);
  const body = JSON.stringify({ bucket: target.bucket, ...remote, ...(region !== undefined ? { region } : {}) });
  const answer = await context.admin(target.alias, 'POST', `${path}/target/add`, {}, body);
  context.print(answer, () => `remote target added: ${answer.target.arn}\nname it in a replication rule as arn:aws:s3:::${answer.target.targetBucket} (or by this ARN)`);
}

export async function replicateList(context: RcContext, text: string): Promise<void> {
  const target = await requireTarget(context, text, 'alias');
  const answer = await context.admin(target.alias, 'GET', `${path}/target/list`, target.bucket ? { bucket: target.bucket } : {});
  context.print(answer, () => {
    const targets = answer.targets as Record<string, any>[];
    if (targets.length === 0) return 'no remote target';
    return table(['ARN', 'SOURCE', 'ENDPOINT', 'TARGET BUCKET', 'ACCESS KEY'], targets.map((item) => [item.arn, item.sourceBucket, item.endpoint, item.targetBucket, item.accessKey]));
  });
}

export async function replicateRemove(context: RcContext, text: string, arn: string): Promise<void> {
  const target = await requireTarget(context, text, 'bucket');
  const answer = await context.admin(target.alias, 'POST', `${path}/target/remove`, { bucket: target.bucket, arn });
  context.print(answer, () => `remote target removed: ${answer.removed}`);
}

export async function replicateStatus(context: RcContext, text: string): Promise<void> {
  const target = await requireTarget(context, text, 'alias');
  const answer = await context.admin(target.alias, 'GET', `${path}/status`, target.bucket ? { bucket: target.bucket } : {});
  context.print(answer, () => describeStatus(answer));
}

export async function replicateResync(context: RcContext, text: string, arn: string | undefined, watch: boolean): Promise<void> {
  const target = await requireTarget(context, text, 'bucket');
  const started = await context.admin(target.alias, 'POST', `${path}/resync`, { bucket: target.bucket, ...(arn !== undefined ? { arn } : {}) });
  const ids = new Set((started.resyncs as Record<string, any>[]).map((resync) => resync.id as string));
  if (!watch) {
    context.print(started, () => describeResyncs(started.resyncs as Record<string, any>[]));
    return;
  }
  const status = async (): Promise<Record<string, any>> => {
    const answer = await context.admin(target.alias, 'GET', `${path}/status`, { bucket: target.bucket });
    return { ...answer, resyncs: (answer.resyncs as Record<string, any>[]).filter((resync) => ids.has(resync.id)) };
  };
  const pending = (value: Record<string, any>): number => (value.targets as Record<string, any>[]).reduce((sum, item) => sum + item.queued, 0);
  // Done when every walk ended and the queues it filled are empty; the bar counts what was queued against what is still waiting.
  const finished = await follow(
    context,
    'resync',
    status,
    (value) => (value.resyncs as Record<string, any>[]).some((resync) => resync.status === 'running') || pending(value) > 0,
    (value) => {
      const queued = (value.resyncs as Record<string, any>[]).reduce((sum, resync) => sum + resync.queued, 0);
      return { done: Math.max(0, queued - pending(value)), total: queued };
    },
  );
  context.print(finished, () => describeStatus(finished));
  if ((finished.resyncs as Record<string, any>[]).some((resync) => resync.status === 'failed')) throw new RcError('a resync failed (see its error above): the server tries it again from its last key');
}

/** Per node (when the deployment has several): each target's queue on it, or why the node did not answer. */
function describeNodes(nodes: Record<string, any>[]): string {
  const rows: (string | number)[][] = [];
  for (const row of nodes) {
    if (row.error !== undefined) rows.push([row.node, '-', '-', '-', '-', '-', '-', `no answer: ${row.error}`]);
    for (const item of (row.targets ?? []) as Record<string, any>[]) rows.push([row.node, item.arn, item.queued, `${Math.round(item.oldestAgeSeconds)}s`, item.completed, formatBytes(item.sentBytes), item.failed, item.unsupported]);
  }
  return table(['NODE', 'ARN', 'QUEUED', 'OLDEST', 'COMPLETED', 'SENT', 'FAILED', 'UNSUPPORTED'], rows);
}

function describeStatus(answer: Record<string, any>): string {
  const targets = answer.targets as Record<string, any>[];
  const nodes = (answer.nodes ?? []) as Record<string, any>[];
  const lines = nodes.length > 1 ? [describeNodes(nodes), 'totals:'] : [];
  lines.push(targets.length === 0 ? 'no remote target' : table(
    ['ARN', 'SOURCE', 'TARGET', 'QUEUED', 'OLDEST', 'COMPLETED', 'SENT', 'FAILED', 'UNSUPPORTED'],
    targets.map((item) => [item.arn, item.sourceBucket, `${item.endpoint}/${item.targetBucket}`, item.queued, `${Math.round(item.oldestAgeSeconds)}s`, item.completed, formatBytes(item.sentBytes), item.failed, item.unsupported]),
  ));
  for (const item of targets) if (item.lastError !== null) lines.push(`${item.arn}: last attempt failed: ${item.lastError}`);
  if ((answer.resyncs as unknown[]).length > 0) lines.push(describeResyncs(answer.resyncs as Record<string, any>[]));
  return lines.join('\n');
}

function describeResyncs(resyncs: Record<string, any>[]): string {
  return table(['RESYNC', 'NODE', 'BUCKET', 'DESTINATION', 'STATUS', 'KEYS', 'QUEUED', 'ERROR'], resyncs.map((resync) => [resync.id, resync.node ?? '-', resync.bucket, resync.bucketArn, resync.status, resync.keys, resync.queued, resync.error ?? '-']));
}
