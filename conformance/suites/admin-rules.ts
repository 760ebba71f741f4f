/**
 * Admin API rules a single deployment shows from outside: query validation per route, status
 * routes and their errors, heal request rules, and the decommission and rebalance refusals.
 * Every check needs the admin API (probed); those that could start or stop work are `mutates`.
 */
import { expectThat, Skip, type AdminAnswer, type Check, type Target } from '../runner/check.js';
import type { Capability } from '../runner/capabilities.js';

const v3 = '/svc/admin/v3';
const v4 = '/svc/admin/v4';

function expectAdminError(answer: AdminAnswer, status: number, code: string, what: string): void {
  expectThat(answer.status === status && answer.body.Code === code, `${what} answered ${answer.status} ${answer.body.Code ?? JSON.stringify(answer.body).slice(0, 120)}, expected ${status} ${code}`);
  expectThat(typeof answer.body.Message === 'string' && typeof answer.body.RequestId === 'string', `${what}: the JSON error lacks Message or RequestId`);
}

async function decommissionStates(target: Target): Promise<string> {
  const status = await target.admin('GET', `${v3}/decommission/status`);
  return JSON.stringify(((status.body.entries ?? []) as { pool: unknown; state: unknown }[]).map((entry) => [entry.pool, entry.state]));
}

/** Mutation queries the SPEC refuses: [route, query, why]. Each must answer 4xx JSON and change nothing. */
const refusedQueries: [string, string, string][] = [
  ['pools/decommission', 'pool=0&by-id=true&force=yes', 'an unknown parameter'],
  ['pools/decommission', 'pool=0&pool=0&by-id=true', 'a repeated parameter'],
  ['pools/decommission', 'pool=0&by-id=maybe', "a by-id other than true/false"],
  ['pools/decommission', 'pool=0&by-id=true&by-id=false', 'a repeated by-id'],
  ['pools/cancel', 'pool=0&by-id=true&now=1', 'an unknown parameter'],
  ['pools/cancel', 'pool=0&by-id=yes', 'a by-id other than true/false'],
  ['pools/clear', 'pool=0&by-id=TRUE', 'a by-id in capitals'],
  ['pools/clear', 'pool=0&by-id=true&verbose', 'an unknown parameter'],
  ['rebalance/start', 'goal=0.5', 'any query at all'],
  ['rebalance/stop', 'now=1', 'any query at all'],
  ['rebalance/start', '', "a bare '?'"],
  ['rebalance/stop', '', "a bare '?'"],
];

const queryChecks: Check[] = refusedQueries.map(([route, query, why]) => ({
  id: `admin.query.${route.replace('/', '-')}.${why.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '').toLowerCase()}`,
  spec: 'Endpoints',
  title: `${route} with ${why} (${query ? `?${query}` : '?'}) is refused with a JSON error and changes nothing`,
  needs: ['admin'] as Capability[],
  mutates: true,
  async run(target: Target) {
    const before = await decommissionStates(target);
    const answer = await target.admin('POST', `${v3}/${route}`, query, { bareQuestionMark: true });
    expectThat(answer.status >= 400 && answer.status < 500 && typeof answer.body.Code === 'string', `${route}?${query} answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 160)}`);
    expectThat((await decommissionStates(target)) === before, `a refused ${route} changed the decommission state`);
  },
}));

/** Heal requests the SPEC refuses: [query, body, expected status, code, why]. */
const refusedHeals: [string, string, number, string, string][] = [
  ['', '{}', 400, 'InvalidArgument', 'a root heal without recursive or pool and set'],
  ['', '{"recursive":true,"readRepair":true}', 400, 'InvalidArgument', 'readRepair=true'],
  ['', '{"recursive":"yes"}', 400, 'InvalidArgument', 'a mistyped field'],
  ['', '{"recursive":true,"bogus":1}', 400, 'InvalidArgument', 'an unknown field'],
  ['', 'not json', 400, 'InvalidArgument', 'a body that is not JSON'],
  ['', '{"recursive":true,"scanMode":"weird"}', 400, 'InvalidArgument', 'a scanMode other than normal or deep'],
  ['forceStart=true&forceStop=true', '{"recursive":true}', 400, 'InvalidArgument', 'forceStart with forceStop'],
  ['forceStop=true', '{"recursive":true}', 400, 'InvalidArgument', 'forceStop without a client token'],
  ['clientToken=no-such-token', '{"recursive":true}', 404, 'NoSuchHealSequence', 'an unknown client token'],
];

const healRuleChecks: Check[] = refusedHeals.map(([query, body, status, code, why]) => ({
  id: `admin.heal.refuses.${why.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '').toLowerCase()}`,
  spec: 'Endpoint rules 3',
  title: `a heal request with ${why} is refused with ${code}`,
  needs: ['admin'] as Capability[],
  async run(target: Target) {
    const answer = await target.admin('POST', `${v3}/heal/`, query, { body });
    expectAdminError(answer, status, code, `heal with ${why}`);
  },
}));

/** GET routes that must answer 200 JSON with these fields. */
const statusRoutes: [string, string, string[]][] = [
  [`${v4}/cluster/snapshot`, 'the cluster snapshot', ['deploymentId', 'nodes', 'pools']],
  [`${v4}/runtime/capabilities`, 'the runtime capabilities', ['version', 'adminApi', 'storageClasses']],
  [`${v3}/info`, 'admin info', ['servers']],
  [`${v4}/heal/replacement-recovery`, 'the replacement-recovery report', ['instances']],
  [`${v3}/rebalance/status`, 'rebalance status', ['id', 'pools']],
  [`${v4}/lifecycle/status`, 'the lifecycle scanner status', ['running', 'intervalMs', 'objectsPerSecond', 'current', 'last']],
];

const statusChecks: Check[] = statusRoutes.map(([path, what, fields]) => ({
  id: `admin.status.${path.split('/').slice(-2).join('-')}`,
  spec: 'Endpoints',
  title: `GET ${path} answers ${what} as JSON with ${fields.join(', ')}`,
  needs: ['admin'] as Capability[],
  async run(target: Target) {
    const answer = await target.admin('GET', path);
    expectThat(answer.status === 200, `${path} answered ${answer.status}`);
    for (const field of fields) expectThat(field in answer.body, `${what} lacks '${field}': ${JSON.stringify(answer.body).slice(0, 160)}`);
  },
}));

async function healBucket(target: Target, purpose: string): Promise<string> {
  const bucket = await target.makeBucket(purpose);
  const { PutObjectCommand } = await import('@aws-sdk/client-s3');
  await target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'healed', Body: 'heal me' }));
  return bucket;
}

const healFlowChecks: Check[] = [
  {
    id: 'admin.heal.bucket-token',
    spec: 'Endpoint rules 3',
    title: 'a bucket heal starts at once with a client token, and the token answers its status',
    needs: ['admin'],
    async run(target) {
      const bucket = await healBucket(target, 'healtoken');
      const started = await target.admin('POST', `${v3}/heal/${bucket}`, '', { body: '{"dryRun":true}' });
      expectThat(started.status === 200 && typeof started.body.clientToken === 'string', `a bucket heal answered ${started.status} ${JSON.stringify(started.body).slice(0, 160)}`);
      const status = await target.admin('POST', `${v3}/heal/${bucket}`, `clientToken=${encodeURIComponent(started.body.clientToken)}`, { body: '{"dryRun":true}' });
      expectThat(status.status === 200 && typeof status.body.status === 'string', `the heal status answered ${status.status} ${JSON.stringify(status.body).slice(0, 160)}`);
    },
  },
  {
    id: 'admin.heal.token-of-other-path',
    spec: 'Endpoint rules 3',
    title: "a client token sent with another bucket's path is refused with InvalidArgument",
    needs: ['admin'],
    async run(target) {
      const bucket = await healBucket(target, 'healother');
      const other = await target.makeBucket('healother2');
      const started = await target.admin('POST', `${v3}/heal/${bucket}`, '', { body: '{"dryRun":true}' });
      expectThat(typeof started.body.clientToken === 'string', `a bucket heal answered ${started.status}`);
      const answer = await target.admin('POST', `${v3}/heal/${other}`, `clientToken=${encodeURIComponent(started.body.clientToken)}`, { body: '{}' });
      expectAdminError(answer, 400, 'InvalidArgument', 'a token of another path');
    },
  },
  {
    id: 'admin.heal.missing-bucket',
    spec: 'Endpoint rules 3',
    title: 'a heal of a bucket that does not exist answers NoSuchBucket',
    needs: ['admin'],
    async run(target) {
      const answer = await target.admin('POST', `${v3}/heal/${target.bucketName('never-made')}`, '', { body: '{}' });
      expectAdminError(answer, 404, 'NoSuchBucket', 'a heal of a missing bucket');
    },
  },
  {
    id: 'admin.heal.keeps-data',
    spec: 'Heal and drive replacement',
    title: 'a heal of a healthy bucket leaves its objects readable and unchanged',
    needs: ['admin'],
    async run(target) {
      const bucket = await healBucket(target, 'healkeep');
      const started = await target.admin('POST', `${v3}/heal/${bucket}`, '', { body: '{"scanMode":"deep"}' });
      expectThat(started.status === 200, `the heal answered ${started.status}`);
      for (let attempt = 0; attempt < 50; attempt += 1) {
        const status = await target.admin('POST', `${v3}/heal/${bucket}`, `clientToken=${encodeURIComponent(started.body.clientToken)}`, { body: '{"scanMode":"deep"}' });
        if (status.body.status !== 'running') break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const { GetObjectCommand } = await import('@aws-sdk/client-s3');
      const body = await (await target.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'healed' }))).Body!.transformToString();
      expectThat(body === 'heal me', 'the object changed after a heal');
    },
  },
  {
    id: 'admin.heal.background-status',
    spec: 'Heal and drive replacement',
    title: 'background-heal status reports the read-repair queue with its limit',
    needs: ['admin'],
    async run(target) {
      const answer = await target.admin('POST', `${v3}/background-heal/status`);
      expectThat(answer.status === 200 && typeof answer.body.mrf?.queued === 'number' && answer.body.mrf.limit === 10_000, `background-heal status answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 160)}`);
    },
  },
];

const poolChecks: Check[] = [
  {
    id: 'admin.pools.status-needs-pool',
    spec: 'Endpoints',
    title: 'pools/status without a pool is refused with InvalidQueryParameter',
    needs: ['admin'],
    async run(target) {
      expectAdminError(await target.admin('GET', `${v3}/pools/status`), 400, 'InvalidQueryParameter', 'pools/status without pool');
    },
  },
  {
    id: 'admin.pools.status-unknown-pool',
    spec: 'Endpoints',
    title: 'pools/status and decommission/status of a pool index that does not exist answer NoSuchPool',
    needs: ['admin'],
    async run(target) {
      for (const route of ['pools/status', 'decommission/status']) expectAdminError(await target.admin('GET', `${v3}/${route}`, 'pool=97&by-id=true'), 404, 'NoSuchPool', `${route} of pool 97`);
    },
  },
  {
    id: 'admin.pools.by-pattern',
    spec: 'Resources and their fields',
    title: "a pool is addressed by its launch pattern as well as by index: both give the same pool",
    needs: ['admin'],
    async run(target) {
      const list = await target.admin('GET', `${v3}/pools/list`);
      const first = list.body.pools?.[0];
      expectThat(first && typeof first.cmdline === 'string', 'pools/list has no pool with a cmdline');
      const byIndex = await target.admin('GET', `${v3}/pools/status`, 'pool=0&by-id=true');
      const byPattern = await target.admin('GET', `${v3}/pools/status`, `pool=${encodeURIComponent(first.cmdline)}`);
      expectThat(byPattern.status === 200 && byPattern.body.id === byIndex.body.id && byPattern.body.cmdline === first.cmdline, `pool by pattern answered ${byPattern.status} ${JSON.stringify(byPattern.body).slice(0, 120)}`);
    },
  },
  {
    id: 'admin.pools.geometry',
    spec: 'What the service does',
    title: 'every pool divides into sets of 2 to 16 drives (or is a single drive) and its counts agree',
    needs: ['admin'],
    async run(target) {
      const list = await target.admin('GET', `${v3}/pools/list`);
      for (const pool of list.body.pools as { id: number; endpointCount: number; setCount: number; drivesPerSet: number }[]) {
        expectThat(pool.setCount * pool.drivesPerSet === pool.endpointCount, `pool ${pool.id}: ${pool.setCount} sets of ${pool.drivesPerSet} is not ${pool.endpointCount} endpoints`);
        expectThat(pool.endpointCount === 1 || (pool.drivesPerSet >= 2 && pool.drivesPerSet <= 16), `pool ${pool.id} has sets of ${pool.drivesPerSet} drives`);
      }
    },
  },
  {
    id: 'admin.pools.storage-class-parity',
    spec: 'Erasure set and object geometry',
    title: 'the storage classes per pool keep parity at most half the set width',
    needs: ['admin'],
    async run(target) {
      const capabilities = await target.admin('GET', `${v4}/runtime/capabilities`);
      const list = await target.admin('GET', `${v3}/pools/list`);
      const widths = new Map((list.body.pools as { id: number; drivesPerSet: number }[]).map((pool) => [pool.id, pool.drivesPerSet]));
      const classes = (capabilities.body.storageClasses ?? []) as Record<string, unknown>[];
      expectThat(Array.isArray(classes) && classes.length === widths.size, `storageClasses ${JSON.stringify(classes).slice(0, 160)} does not give one entry per pool`);
      for (const entry of classes) {
        const width = widths.get(entry.pool as number) ?? 0;
        for (const name of ['STANDARD', 'REDUCED_REDUNDANCY']) {
          const parity = Number(/^EC:(\d+)$/.exec(String(entry[name]))?.[1] ?? NaN);
          expectThat(Number.isInteger(parity) && parity <= width / 2, `pool ${entry.pool} has ${name} ${entry[name]} on sets of ${width}`);
        }
      }
    },
  },
  {
    id: 'admin.errors.unknown-route',
    spec: 'Endpoints',
    title: 'an admin path that does not exist answers a JSON error, not a 2xx',
    needs: ['admin'],
    async run(target) {
      const answer = await target.admin('GET', `${v3}/no-such-route`);
      expectThat(answer.status >= 400 && typeof answer.body.Code === 'string', `an unknown admin route answered ${answer.status}`);
    },
  },
  {
    id: 'admin.auth.wrong-secret',
    spec: 'Authentication',
    title: 'an admin request signed with the wrong secret is refused with 403 and does nothing',
    needs: ['admin'],
    async run(target) {
      const { sendSigned, jsonOrRaw } = await import('../../src/cli/rc/signed-request.js');
      const answer = await sendSigned({ endpoint: target.options.endpoint, accessKey: target.options.accessKey, secretKey: `${target.options.secretKey}-wrong`, method: 'POST', path: `${v3}/rebalance/stop` });
      expectThat(answer.status === 403, `a forged admin request answered ${answer.status} ${JSON.stringify(jsonOrRaw(answer.text)).slice(0, 100)}`);
    },
  },
];

/** Decommission and rebalance refusals on a deployment of two or more pools. */
const multiPool: Capability[] = ['admin', 'multi-pool'];

const exclusionChecks: Check[] = [
  {
    id: 'admin.decommission.single-pool',
    spec: 'Endpoint rules 2',
    title: 'on a single-pool deployment decommission and rebalance start answer NotImplemented',
    needs: ['admin'],
    mutates: true,
    async run(target) {
      const list = await target.admin('GET', `${v3}/pools/list`);
      if ((list.body.pools ?? []).length > 1) throw new Skip('the target has more than one pool');
      expectAdminError(await target.admin('POST', `${v3}/pools/decommission`, 'pool=0&by-id=true'), 501, 'NotImplemented', 'decommission on one pool');
      expectAdminError(await target.admin('POST', `${v3}/rebalance/start`), 501, 'NotImplemented', 'rebalance on one pool');
    },
  },
  ...(
    [
      ['pools/decommission', 'pool=97&by-id=true', 404, 'NoSuchPool', 'an unknown pool index'],
      ['pools/decommission', 'pool=%2Fno%2Fsuch%2Fd%7B1...2%7D', 404, 'NoSuchPool', 'an unknown launch pattern'],
      ['pools/decommission', 'pool=0,0&by-id=true', 400, 'DuplicatePoolTarget', 'the same pool twice in the batch'],
      ['pools/cancel', 'pool=0&by-id=true', 409, 'NoActiveDecommission', 'cancel with nothing running'],
    ] as [string, string, number, string, string][]
  ).map(([route, query, status, code, why]): Check => ({
    id: `admin.decommission.refuses.${why.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '').toLowerCase()}`,
    spec: 'States and transitions (decommission)',
    title: `${route} with ${why} is refused with ${code} and nothing is persisted`,
    needs: multiPool,
    mutates: true,
    async run(target) {
      const before = await decommissionStates(target);
      if (before !== '[]') throw new Skip(`the target already has decommission entries ${before}`);
      expectAdminError(await target.admin('POST', `${v3}/${route}`, query), status, code, `${route}?${query}`);
      expectThat((await decommissionStates(target)) === before, `a refused ${route} changed the decommission state`);
    },
  })),
  {
    id: 'admin.decommission.refuses.all-pools',
    spec: 'States and transitions (decommission)',
    title: 'a batch naming every pool is refused with LastPoolCannotBeDecommissioned, validated whole before anything is persisted',
    needs: multiPool,
    mutates: true,
    async run(target) {
      const count = ((await target.admin('GET', `${v3}/pools/list`)).body.pools as unknown[]).length;
      const before = await decommissionStates(target);
      if (before !== '[]') throw new Skip(`the target already has decommission entries ${before}`);
      expectAdminError(await target.admin('POST', `${v3}/pools/decommission`, `pool=${Array.from({ length: count }, (_, index) => index).join(',')}&by-id=true`), 409, 'LastPoolCannotBeDecommissioned', 'a batch of every pool');
      expectThat((await decommissionStates(target)) === before, 'a refused batch persisted an entry');
    },
  },
  {
    id: 'admin.decommission.clear-without-entry',
    spec: 'States and transitions (decommission)',
    title: 'clear of a pool with no failed or canceled entry is refused with DecommissionNotClearable',
    needs: multiPool,
    mutates: true,
    async run(target) {
      if ((await decommissionStates(target)) !== '[]') throw new Skip('the target already has decommission entries');
      expectAdminError(await target.admin('POST', `${v3}/pools/clear`, 'pool=0&by-id=true'), 409, 'DecommissionNotClearable', 'clear without an entry');
    },
  },
  {
    id: 'admin.decommission.cancel-then-clear',
    spec: 'States and transitions (decommission)',
    title: 'a started decommission can be canceled (kept as canceled), is then refused a second start until cleared, and clear removes it',
    needs: multiPool,
    mutates: true,
    async run(target) {
      const count = ((await target.admin('GET', `${v3}/pools/list`)).body.pools as unknown[]).length;
      const pool = String(count - 1);
      if ((await decommissionStates(target)) !== '[]') throw new Skip('the target already has decommission entries');
      const started = await target.admin('POST', `${v3}/pools/decommission`, `pool=${pool}&by-id=true`);
      if (started.body.Code === 'RebalanceInProgress') throw new Skip('a rebalance is running on the target');
      expectThat(started.status === 200, `decommission start answered ${started.status} ${JSON.stringify(started.body).slice(0, 120)}`);
      try {
        const canceled = await target.admin('POST', `${v3}/pools/cancel`, `pool=${pool}&by-id=true`);
        if (canceled.status !== 200) throw new Skip(`the decommission finished before it could be canceled (${canceled.body.Code})`);
        expectThat(canceled.body.entry?.state === 'canceled', `cancel answered ${JSON.stringify(canceled.body).slice(0, 120)}`);
        expectAdminError(await target.admin('POST', `${v3}/pools/decommission`, `pool=${pool}&by-id=true`), 409, 'DecommissionNotCleared', 'a second start of a canceled pool');
        const cleared = await target.admin('POST', `${v3}/pools/clear`, `pool=${pool}&by-id=true`);
        expectThat(cleared.status === 200, `clear answered ${cleared.status}`);
        expectThat((await decommissionStates(target)) === '[]', 'clear did not remove the entry');
      } finally {
        await target.admin('POST', `${v3}/pools/cancel`, `pool=${pool}&by-id=true`);
        await target.admin('POST', `${v3}/pools/clear`, `pool=${pool}&by-id=true`);
      }
    },
  },
  {
    id: 'admin.rebalance.stop-when-idle',
    spec: 'Rebalance (per pool)',
    title: 'rebalance stop with no rebalance running answers NoRebalanceRunning',
    needs: multiPool,
    mutates: true,
    async run(target) {
      const status = await target.admin('GET', `${v3}/rebalance/status`);
      if ((status.body.pools ?? []).some((pool: { status: string }) => pool.status === 'active' || pool.status === 'stopping')) throw new Skip('a rebalance is running on the target');
      expectAdminError(await target.admin('POST', `${v3}/rebalance/stop`), 409, 'NoRebalanceRunning', 'rebalance stop when idle');
    },
  },
];

export const adminRuleChecks: Check[] = [...queryChecks, ...statusChecks, ...poolChecks, ...healRuleChecks, ...healFlowChecks, ...exclusionChecks];
