/** `rc admin object placement` and `rc admin simulate`: erasure made visible, over the signed admin API. */
import { formatBytes, RcError, table, type RcContext } from './context.js';
import { requireTarget } from './objects.js';

export async function placement(context: RcContext, text: string, options: { verify: boolean; versionId?: string }): Promise<void> {
  const target = await requireTarget(context, text, 'key');
  const query: Record<string, string> = { bucket: target.bucket, key: target.key, ...(options.versionId ? { versionId: options.versionId } : {}), ...(options.verify ? { verify: 'true' } : {}) };
  const answer = await context.admin(target.alias, 'GET', '/svc/admin/v4/object/placement', query);
  context.print(answer, () => describePlacement(answer));
}

function describePlacement(answer: Record<string, any>): string {
  const geometry = answer.geometry;
  const quorums = answer.quorums;
  const lines = [
    `${answer.bucket}/${answer.key} (version ${answer.version.versionId}, ${formatBytes(answer.version.sizeBytes)}, ${answer.version.storageClass})`,
    `pool ${answer.pool}, set ${answer.set}: EC ${geometry.dataShards}+${geometry.parityShards} on ${geometry.setDriveCount} drives, block ${formatBytes(geometry.blockSizeBytes)}, ${geometry.parts.length} part(s), ${geometry.inline ? 'inline in xl.meta' : 'shard files'}`,
    `quorums: read ${quorums.read.needed} (${quorums.read.formula}), write ${quorums.write.needed} (${quorums.write.formula}), delete ${quorums.delete.needed} (${quorums.delete.formula})`,
    `now: ${answer.now.offlineDrives} drive(s) offline; readable ${yes(answer.now.readable)}, writable ${yes(answer.now.writable)}, deletable ${yes(answer.now.deletable)}`,
  ];
  const headers = ['SHARD', 'ROLE', 'SLOT', 'NODE', 'DRIVE', 'STATE', 'FILE', 'SIZE', ...(answer.verified ? ['VERIFY'] : [])];
  const rows = (answer.shards as any[]).map((shard) => {
    const files = shard.files as any[];
    const file = shard.inline ? 'inline in xl.meta' : files.length === 1 ? files[0].path : `${files.length} parts: ${files[0].path.replace(/part\.\d+$/, 'part.*')}`;
    const size = files.reduce((sum, entry) => sum + entry.sizeBytes, 0);
    return [shard.index, shard.role, shard.slot, shard.drive.node, shard.drive.endpoint, shard.drive.state, file, formatBytes(size), ...(answer.verified ? [shard.status + (shard.problem ? ` (${shard.problem})` : '')] : [])];
  });
  return [...lines, table(headers, rows)].join('\n');
}

export interface SimulateFlags {
  drives: string[];
  nodes: string[];
  bucket?: string;
  prefix?: string;
}

export async function simulate(context: RcContext, aliasName: string, flags: SimulateFlags): Promise<void> {
  if (flags.prefix !== undefined && flags.bucket === undefined) throw new RcError('--prefix needs --bucket', 2);
  const alias = await context.alias(aliasName);
  const body = { drives: flags.drives, nodes: flags.nodes, ...(flags.bucket !== undefined ? { scope: { bucket: flags.bucket, ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}) } } : {}) };
  const answer = await context.admin(alias, 'POST', '/svc/admin/v4/simulate/failure', {}, JSON.stringify(body));
  context.print(answer, () => describeSimulation(answer));
}

function describeSimulation(answer: Record<string, any>): string {
  const failed = [...(answer.failed.drives as string[]).map((drive) => `drive ${drive}`), ...(answer.failed.nodes as string[]).map((node) => `node ${node}`)];
  const rows = (answer.sets as any[]).flatMap((set) =>
    (set.classes as any[]).map((entry) => [
      set.pool,
      set.set,
      `${set.failedSlots.length}/${set.setDriveCount}`,
      `${entry.storageClass} EC:${entry.parityShards}`,
      verdict(entry.readable, entry.moreFailuresTolerated.read),
      verdict(entry.writable, entry.moreFailuresTolerated.write),
      verdict(entry.deletable, entry.moreFailuresTolerated.delete),
    ]),
  );
  const lines = [
    `failing ${failed.length === 0 ? 'nothing (drives offline now still count)' : failed.join(', ')}`,
    table(['POOL', 'SET', 'FAILED', 'CLASS', 'READ', 'WRITE', 'DELETE'], rows),
    `every set: readable ${yes(answer.summary.readable)}, writable ${yes(answer.summary.writable)}, deletable ${yes(answer.summary.deletable)}`,
  ];
  const scope = answer.scope;
  if (scope) {
    lines.push(`${scope.bucket}/${scope.prefix}: ${scope.objectsUnreadable} of ${scope.objectsScanned} object(s) would be unreadable${scope.complete ? '' : ` (scan stopped at its bound of ${scope.scanLimit} objects)`}`);
    for (const key of scope.unreadableSample as string[]) lines.push(`  ${key}`);
  }
  return lines.join('\n');
}

/** `yes (2 more)`: the verdict and how many more drive failures keep it. */
function verdict(ok: boolean, more: number): string {
  return ok ? `yes (+${more})` : 'NO';
}

function yes(value: boolean): string {
  return value ? 'yes' : 'NO';
}
