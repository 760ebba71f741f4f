/** Black-box admin API checks. Those marked `mutates` run only with --allow-admin-mutations. */
import { expectThat, Skip, type Check, type Target } from '../runner/check.js';
import { adminRuleChecks } from './admin-rules.js';

const v3 = '/svc/admin/v3';
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function isErrorJson(body: Record<string, any>): boolean {
  return typeof body.Code === 'string' && typeof body.Message === 'string';
}

async function poolCount(target: Target): Promise<number> {
  const list = await target.admin('GET', `${v3}/pools/list`);
  expectThat(list.status === 200 && Array.isArray(list.body.pools), `pools/list answered ${list.status}`);
  return list.body.pools.length as number;
}

async function decommissionEntries(target: Target): Promise<any[]> {
  const status = await target.admin('GET', `${v3}/decommission/status`);
  expectThat(status.status === 200 && Array.isArray(status.body.entries), `decommission/status answered ${status.status}`);
  return status.body.entries as any[];
}

const baseChecks: Check[] = [
  {
    id: 'admin.auth.root-only',
    spec: 'Authentication',
    title: 'admin requests without a valid root signature are refused with AccessDenied',
    async run(target) {
      const unsigned = await target.admin('GET', `${v3}/pools/list`, '', { unsigned: true });
      expectThat(unsigned.status === 403 && unsigned.body.Code === 'AccessDenied', `an unsigned admin request answered ${unsigned.status} ${unsigned.body.Code ?? ''}`);
    },
  },
  {
    id: 'admin.status.fields',
    spec: 'Rebalance status, per pool',
    title: 'pools/list, decommission/status and rebalance/status answer with their fields, typed',
    async run(target) {
      const list = await target.admin('GET', `${v3}/pools/list`);
      expectThat(list.status === 200, `pools/list answered ${list.status}`);
      for (const pool of list.body.pools as any[]) {
        expectThat(Number.isInteger(pool.id) && typeof pool.cmdline === 'string' && Number.isInteger(pool.setCount) && Number.isInteger(pool.drivesPerSet), `pool entry lacks id/cmdline/setCount/drivesPerSet: ${JSON.stringify(pool)}`);
      }
      const status = await target.admin('GET', `${v3}/pools/status`, 'pool=0&by-id=true');
      expectThat(status.status === 200 && Array.isArray(status.body.sets), `pools/status answered ${status.status}`);
      for (const drive of status.body.sets.flatMap((set: any) => set.drives)) {
        expectThat(typeof drive.endpoint === 'string' && typeof drive.local === 'boolean' && typeof drive.uuid === 'string' && ['online', 'offline'].includes(drive.state), `drive entry lacks endpoint/local/uuid/state: ${JSON.stringify(drive)}`);
      }
      await decommissionEntries(target);
      const rebalance = await target.admin('GET', `${v3}/rebalance/status`);
      expectThat(rebalance.status === 200 && Array.isArray(rebalance.body.pools), `rebalance/status answered ${rebalance.status}`);
      for (const pool of rebalance.body.pools as any[]) {
        for (const field of ['id', 'status', 'stopping', 'used', 'lastError', 'cleanupWarnings', 'progress']) expectThat(field in pool, `rebalance pool status lacks '${field}'`);
        for (const field of ['objects', 'versions', 'bytes', 'remainingBuckets', 'elapsedMs']) expectThat(typeof pool.progress[field] === 'number', `rebalance progress.${field} is not a number`);
      }
      expectThat(rebalance.body.id === null || uuid.test(rebalance.body.id), 'rebalance id is neither null nor a uuid');
    },
  },
  {
    id: 'admin.status.ignores-unknown-parameters',
    spec: 'Endpoints',
    title: 'status (GET) queries ignore unknown parameters',
    async run(target) {
      const answer = await target.admin('GET', `${v3}/decommission/status`, 'verbose=1&color=blue');
      expectThat(answer.status === 200, `decommission/status with unknown parameters answered ${answer.status}`);
      const pools = await target.admin('GET', `${v3}/pools/list`, 'whatever=1');
      expectThat(pools.status === 200, `pools/list with an unknown parameter answered ${pools.status}`);
    },
  },
  {
    id: 'admin.rebalance.start-returns-id',
    spec: 'Rebalance status, per pool',
    title: 'rebalance start answers {"id": <uuid>} and status then reports that id',
    mutates: true,
    async run(target) {
      if ((await poolCount(target)) < 2) {
        const single = await target.admin('POST', `${v3}/rebalance/start`);
        expectThat(single.body.Code === 'NotImplemented', `rebalance start on one pool answered ${single.status} ${single.body.Code ?? ''}`);
        return;
      }
      const started = await target.admin('POST', `${v3}/rebalance/start`);
      if (started.body.Code === 'DecommissionBlocksRebalance') throw new Skip('a decommission is running on the target');
      expectThat(started.status === 200 && uuid.test(started.body.id), `rebalance start answered ${started.status} ${JSON.stringify(started.body)}`);
      const status = await target.admin('GET', `${v3}/rebalance/status`);
      expectThat(status.body.id === started.body.id, 'rebalance status does not report the id start returned');
      await target.admin('POST', `${v3}/rebalance/stop`);
    },
  },
  {
    id: 'admin.decommission.start-is-not-completion',
    spec: 'Endpoint rules 6',
    title: 'decommission start answers before the work is done (queued or active), and a running decommission blocks rebalance start',
    mutates: true,
    async run(target) {
      const pools = await poolCount(target);
      if (pools < 2) {
        const single = await target.admin('POST', `${v3}/pools/decommission`, 'pool=0&by-id=true');
        expectThat(single.body.Code === 'NotImplemented', `decommission on one pool answered ${single.status} ${single.body.Code ?? ''}`);
        return;
      }
      const last = String(pools - 1);
      const existing = (await decommissionEntries(target)).find((entry) => String(entry.pool) === last);
      if (existing) throw new Skip(`pool ${last} already has a decommission entry (${existing.state})`);
      const started = await target.admin('POST', `${v3}/pools/decommission`, `pool=${last}&by-id=true`);
      expectThat(started.status === 200, `decommission start answered ${started.status} ${JSON.stringify(started.body)}`);
      try {
        const state = started.body.entries?.[0]?.state;
        expectThat(state === 'queued' || state === 'active', `decommission start reported '${state}': a start call must answer before the work is done`);
        const rebalance = await target.admin('POST', `${v3}/rebalance/start`);
        const now = (await decommissionEntries(target)).find((entry) => String(entry.pool) === last);
        if (rebalance.status === 200) {
          await target.admin('POST', `${v3}/rebalance/stop`);
          expectThat(now?.state === 'completed', 'rebalance start was accepted while a decommission was still running');
        } else {
          expectThat(rebalance.status === 409 && isErrorJson(rebalance.body), `rebalance start during a decommission answered ${rebalance.status} ${JSON.stringify(rebalance.body)}`);
        }
      } finally {
        await target.admin('POST', `${v3}/pools/cancel`, `pool=${last}&by-id=true`);
        await target.admin('POST', `${v3}/pools/clear`, `pool=${last}&by-id=true`);
      }
    },
  },
];

/** Every admin check; each needs the admin API, which the run probes first. */
export const adminChecks: Check[] = [...baseChecks, ...adminRuleChecks].map((check) => ({ ...check, needs: [...new Set([...(check.needs ?? []), 'admin' as const])] }));
