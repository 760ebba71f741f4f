/** `rc admin ...`: pools, rebalance, decommission, heal and info, over the signed admin API. */
import { formatBytes, RcError, table, type RcContext } from './context.js';

const v3 = '/svc/admin/v3';

export async function poolList(context: RcContext, aliasName: string): Promise<void> {
  const answer = await context.admin(await context.alias(aliasName), 'GET', `${v3}/pools/list`);
  context.print(answer, () =>
    table(
      ['ID', 'POOL', 'SETS', 'DRIVES/SET', 'USED', 'CAPACITY', 'DECOMMISSION'],
      (answer.pools as any[]).map((pool) => [pool.id, pool.cmdline, pool.setCount, pool.drivesPerSet, formatBytes(pool.usedBytes), formatBytes(pool.totalBytes), pool.decommission?.state ?? '-']),
    ),
  );
}

export async function poolStatus(context: RcContext, aliasName: string, pool: string, byId: boolean): Promise<void> {
  checkPoolNames(pool, byId);
  const answer = await context.admin(await context.alias(aliasName), 'GET', `${v3}/pools/status`, { pool, 'by-id': String(byId) });
  context.print(answer, () => {
    const drives = (answer.sets as any[]).flatMap((set) => set.drives as any[]);
    return [
      `pool ${answer.id}: ${answer.cmdline}  (${answer.setCount} set(s) of ${answer.drivesPerSet}, ${formatBytes(answer.usedBytes)} used of ${formatBytes(answer.totalBytes)})`,
      `decommission: ${answer.decommission?.state ?? 'none'}`,
      table(['SET', 'SLOT', 'ENDPOINT', 'LOCAL', 'STATE', 'UUID', 'USED'], drives.map((drive) => [drive.set, drive.slot, drive.endpoint, drive.local ? 'yes' : 'no', drive.state, drive.uuid, formatBytes(drive.usedBytes)])),
    ].join('\n');
  });
}

export async function rebalance(context: RcContext, action: string, aliasName: string, watch: boolean): Promise<void> {
  const alias = await context.alias(aliasName);
  if (action === 'start') {
    const answer = await context.admin(alias, 'POST', `${v3}/rebalance/start`);
    context.print(answer, () => `rebalance started: ${answer.id} (rc admin rebalance status ${aliasName} --watch follows it)`);
    return;
  }
  if (action === 'stop') {
    const answer = await context.admin(alias, 'POST', `${v3}/rebalance/stop`);
    context.print(answer, () => `rebalance ${answer.id} stopped at ${answer.stoppedAt}${answer.stopPropagation?.complete === false ? `; not every node confirmed: ${answer.stopPropagation.failedPeers.join(', ')}` : ''}`);
    return;
  }
  if (action !== 'status') throw new RcError(`unknown rebalance action '${action}' (start, status, stop)`, 2);
  const status = async () => context.admin(alias, 'GET', `${v3}/rebalance/status`);
  const running = (answer: Record<string, any>) => (answer.pools as any[]).some((pool) => pool.status === 'active' || pool.status === 'stopping');
  const answer = watch ? await follow(context, 'rebalance', status, running, (value) => progressOf((value.pools as any[]).map((pool) => [pool.progress.bytes, Math.max(pool.progress.bytesToMove, pool.progress.bytes)]))) : await status();
  context.print(answer, () =>
    answer.id === null
      ? 'no rebalance has run'
      : [
          `rebalance ${answer.id}: goal ${(answer.goalUsed * 100).toFixed(1)}% used, started ${answer.startedAt}${answer.stoppedAt ? `, stopped ${answer.stoppedAt}` : ''}`,
          table(
            ['POOL', 'STATUS', 'USED', 'OBJECTS', 'BYTES', 'ETA', 'LAST ERROR'],
            (answer.pools as any[]).map((pool) => [pool.id, pool.status, `${(pool.used * 100).toFixed(1)}%`, pool.progress.objects, formatBytes(pool.progress.bytes), pool.progress.etaMs !== undefined ? `${Math.round(pool.progress.etaMs / 1000)}s` : '-', pool.lastError || '-']),
          ),
        ].join('\n'),
  );
}

export async function decommission(context: RcContext, action: string, aliasName: string, pools: string | undefined, byId: boolean, watch: boolean): Promise<void> {
  const alias = await context.alias(aliasName);
  const query = (): Record<string, string> => {
    if (pools === undefined) throw new RcError(`rc admin decommission ${action} needs a pool (its launch pattern, or its index with --by-id)`, 2);
    checkPoolNames(pools, byId);
    return { pool: pools, 'by-id': String(byId) };
  };
  if (action === 'start') {
    const answer = await context.admin(alias, 'POST', `${v3}/pools/decommission`, query());
    context.print(answer, () => (answer.entries as any[]).map((entry) => `pool ${entry.pool}: decommission ${entry.state}`).join('\n'));
    return;
  }
  if (action === 'cancel') {
    const answer = await context.admin(alias, 'POST', `${v3}/pools/cancel`, query());
    context.print(answer, () => `pool ${answer.entry.pool}: decommission ${answer.entry.state}`);
    return;
  }
  if (action === 'clear') {
    const answer = await context.admin(alias, 'POST', `${v3}/pools/clear`, query());
    context.print(answer, () => `pool ${answer.pool}: decommission entry cleared`);
    return;
  }
  if (action !== 'status') throw new RcError(`unknown decommission action '${action}' (start, cancel, clear, status)`, 2);
  const filter: Record<string, string> = pools === undefined ? {} : (checkPoolNames(pools, byId), { pool: pools, 'by-id': String(byId) });
  const status = async () => context.admin(alias, 'GET', `${v3}/decommission/status`, filter);
  const running = (answer: Record<string, any>) => (answer.entries as any[]).some((entry) => entry.state === 'active' || entry.state === 'queued');
  const answer = watch ? await follow(context, 'decommission', status, running, (value) => progressOf((value.entries as any[]).map((entry) => [entry.progress.objects, Math.max(entry.progress.totalObjects, entry.progress.objects)]))) : await status();
  context.print(answer, () =>
    (answer.entries as any[]).length === 0
      ? 'no decommission entries'
      : table(
          ['POOL', 'STATE', 'OBJECTS', 'BYTES', 'ELAPSED', 'ETA', 'REASON'],
          (answer.entries as any[]).map((entry) => [entry.pool, entry.state, `${entry.progress.objects}/${entry.progress.totalObjects}`, formatBytes(entry.progress.bytes), entry.elapsedMs !== undefined ? `${Math.round(entry.elapsedMs / 1000)}s` : '-', entry.etaMs !== undefined ? `${Math.round(entry.etaMs / 1000)}s` : '-', entry.reason ?? '-']),
        ),
  );
}

export interface HealFlags {
  bucket?: string;
  prefix?: string;
  scanMode?: string;
  remove: boolean;
  recreate: boolean;
  dryRun: boolean;
  clientToken?: string;
  watch: boolean;
}

export async function heal(context: RcContext, action: string, aliasName: string, flags: HealFlags): Promise<void> {
  const alias = await context.alias(aliasName);
  if (flags.prefix !== undefined && flags.bucket === undefined) throw new RcError('--prefix needs --bucket', 2);
  if (flags.scanMode !== undefined && flags.scanMode !== 'normal' && flags.scanMode !== 'deep') throw new RcError("--scan-mode is 'normal' or 'deep'", 2);
  const path = `${v3}/heal/${flags.bucket ? encodeURIComponent(flags.bucket) : ''}${flags.prefix ? `/${flags.prefix.split('/').map(encodeURIComponent).join('/')}` : ''}`;
  const status = async () => context.admin(alias, 'POST', `${v3}/heal/`, { clientToken: flags.clientToken! });
  if (action === 'start') {
    const body = { recursive: true, dryRun: flags.dryRun, remove: flags.remove, recreate: flags.recreate, scanMode: flags.scanMode ?? 'normal' };
    const started = await context.admin(alias, 'POST', path, {}, JSON.stringify(body));
    if (!flags.watch) {
      context.print(started, () => `heal started: client token ${started.clientToken} (rc admin heal status ${aliasName} --client-token ${started.clientToken})`);
      return;
    }
    flags.clientToken = started.clientToken as string;
  } else if (action === 'stop') {
    if (!flags.clientToken) throw new RcError('rc admin heal stop needs --client-token', 2);
    const answer = await context.admin(alias, 'POST', `${v3}/heal/`, { clientToken: flags.clientToken, forceStop: 'true' });
    context.print(answer, () => summary(answer));
    return;
  } else if (action !== 'status') {
    throw new RcError(`unknown heal action '${action}' (start, status, stop)`, 2);
  }
  if (!flags.clientToken) {
    const background = await context.admin(alias, 'POST', `${v3}/background-heal/status`);
    context.print(background, () => [`read-repair queue: ${background.mrf.queued} queued, ${background.mrf.processed} repaired, ${background.mrf.failed} failed`, ...(background.healingDrives as any[]).map((drive) => `drive ${drive.endpoint}: ${drive.state} (${drive.objectsHealed} objects)`)].join('\n'));
    return;
  }
  const answer = flags.watch ? await follow(context, 'heal', status, (value) => value.status === 'running', (value) => ({ done: value.counts.objectsScanned, total: 0 })) : await status();
  context.print(answer, () => summary(answer));
}

function summary(answer: Record<string, any>): string {
  const counts = answer.counts;
  const lines = [`heal ${answer.clientToken}: ${answer.status}; ${counts.objectsScanned} scanned, ${counts.objectsHealed} healed, ${counts.objectsUnrecoverable} unrecoverable, ${counts.failures} failed, ${counts.shardsHealed} shards written`];
  for (const item of (answer.items as any[]).slice(-20)) lines.push(`  ${item.type} ${item.bucket ?? ''}${item.object ? `/${item.object}` : ''}: ${item.outcome}${item.reason ? ` (${item.reason})` : ''}`);
  return lines.join('\n');
}

export async function info(context: RcContext, what: string, aliasName: string, offlineOnly: boolean): Promise<void> {
  const alias = await context.alias(aliasName);
  if (what === 'cluster') {
    const snapshot = await context.admin(alias, 'GET', '/svc/admin/v4/cluster/snapshot');
    context.print(snapshot, () =>
      [
        `deployment ${snapshot.deploymentId}`,
        table(['NODE', 'STATE', 'DRIVES'], (snapshot.nodes as any[]).map((node) => [node.endpoint, node.state, `${node.drivesOnline}/${node.drives}`])),
        table(['POOL', 'SETS', 'USED', 'CAPACITY', 'DECOMMISSION'], (snapshot.pools as any[]).map((pool) => [pool.id, pool.setCount, formatBytes(pool.usedBytes), formatBytes(pool.totalBytes), pool.decommission?.state ?? '-'])),
      ].join('\n'),
    );
    return;
  }
  if (what !== 'disk') throw new RcError(`unknown info topic '${what}' (cluster, disk)`, 2);
  const answer = await context.admin(alias, 'GET', `${v3}/info`);
  const drives = (answer.servers as any[]).flatMap((server) => server.drives as any[]).filter((drive) => !offlineOnly || drive.state !== 'online');
  context.print({ drives }, () => (drives.length === 0 ? (offlineOnly ? 'every drive is online' : 'no drives') : table(['POOL', 'SET', 'SLOT', 'ENDPOINT', 'STATE', 'UUID', 'USED', 'CAPACITY'], drives.map((drive) => [drive.pool, drive.set, drive.slot, drive.endpoint, drive.state, drive.uuid, formatBytes(drive.usedBytes), formatBytes(drive.totalBytes)]))));
}

/** With --by-id every name must be a zero-based index. */
function checkPoolNames(pools: string, byId: boolean): void {
  if (!byId) return;
  for (const name of pools.split(',')) if (!/^\d+$/.test(name.trim())) throw new RcError(`with --by-id a pool is a zero-based index, not '${name}'`, 2);
}

function progressOf(pairs: [number, number][]): { done: number; total: number } {
  return pairs.reduce((sum, [done, total]) => ({ done: sum.done + done, total: sum.total + total }), { done: 0, total: 0 });
}

/** Polls a status until it is no longer running, drawing a progress bar on a terminal. */
export async function follow(context: RcContext, label: string, status: () => Promise<Record<string, any>>, running: (value: Record<string, any>) => boolean, measure: (value: Record<string, any>) => { done: number; total: number }): Promise<Record<string, any>> {
  const bar = context.progress(label);
  for (;;) {
    const value = await status();
    const { done, total } = measure(value);
    bar.update(done, total || done || 1, total ? `${done}/${total}` : `${done}`);
    if (!running(value)) {
      bar.finish();
      return value;
    }
    await new Promise((resolve) => setTimeout(resolve, Number(context.io.env.RC_WATCH_INTERVAL_MS ?? 1000)));
  }
}
