/**
 * `rc`: the command-line client of svc. Parses the command line, runs one command, and turns
 * every failure into one line on stderr with a non-zero exit (2 for usage errors).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { createContext, RcError, table, type RcContext, type RcIo } from './context.js';
import * as adminCommands from './admin.js';
import * as explorer from './explorer.js';
import { prometheusGenerate } from './prometheus.js';
import * as iamCommands from './admin-iam.js';
import { lifecycle } from './admin-lifecycle.js';
import { kmsKey, kmsKeyActions, kmsRewrapStatus } from './admin-kms.js';
import { addEventTarget, eventTargets, removeEventTarget } from './admin-events.js';
import * as replicate from './admin-replicate.js';
import { watch as watchBucket } from './watch.js';
import { mirror } from './mirror.js';
import { tierAdd, tierInfo, tierList, tierRemove } from './admin-tier.js';
import { du } from './du.js';

const rebalanceSummaries: Record<string, string> = { start: 'start the rebalance', status: "show the rebalance's progress", stop: 'stop the rebalance' };
import * as objects from './objects.js';

interface Command {
  usage: string;
  summary: string;
  options?: ParseArgsConfig['options'];
  positionals: [min: number, max: number];
  run(context: RcContext, args: string[], values: Record<string, string | boolean | undefined>): Promise<void>;
}

const json = { json: { type: 'boolean' } } as const;
const byId = { 'by-id': { type: 'boolean' } } as const;
const watch = { watch: { type: 'boolean' } } as const;

const serviceAccountOptions = {
  'access-key': { type: 'string' },
  'secret-key': { type: 'string' },
  policy: { type: 'string' },
  name: { type: 'string' },
  description: { type: 'string' },
  expiry: { type: 'string' },
} as const;

function serviceAccountValues(values: Record<string, string | boolean | undefined>): iamCommands.ServiceAccountOptions {
  const text = (name: string) => values[name] as string | undefined;
  const options: iamCommands.ServiceAccountOptions = {};
  const fields: [keyof iamCommands.ServiceAccountOptions, string | boolean | undefined][] = [
    ['accessKey', text('access-key')], ['secretKey', text('secret-key')], ['policyFile', text('policy')], ['name', text('name')], ['description', text('description')], ['expiry', text('expiry')],
    ['enable', values.enable as boolean | undefined], ['disable', values.disable as boolean | undefined], ['noPolicy', values['no-policy'] as boolean | undefined],
  ];
  for (const [name, value] of fields) if (value !== undefined) (options as Record<string, unknown>)[name] = value;
  return options;
}

const commands: Record<string, Command> = {
  'alias set': {
    usage: 'rc alias set <name> <url> <access-key> <secret-key>',
    summary: 'remember a server under a short name (config file, mode 600)',
    positionals: [4, 4],
    run: async (context, [name, url, accessKey, secretKey]) => {
      if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(name!)) throw new RcError(`alias names are letters, digits, '-' and '_', not '${name}'`, 2);
      let parsed: URL;
      try {
        parsed = new URL(url!);
      } catch {
        throw new RcError(`'${url}' is not a URL (write http://host:port)`, 2);
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new RcError(`'${url}' is not an http or https URL`, 2);
      const aliases = await context.readAliases();
      aliases[name!] = { url: parsed.origin, accessKey: accessKey!, secretKey: secretKey! };
      await context.writeAliases(aliases);
      context.print({ alias: name, url: parsed.origin }, () => `alias ${name} -> ${parsed.origin} saved in ${context.configPath}`);
    },
  },
  'alias list': {
    usage: 'rc alias list',
    summary: 'show the saved aliases',
    positionals: [0, 0],
    run: async (context) => {
      const aliases = await context.readAliases();
      const rows = Object.entries(aliases).map(([name, alias]) => ({ alias: name, url: alias.url, accessKey: alias.accessKey }));
      context.print(rows, () => (rows.length === 0 ? 'no aliases (rc alias set <name> <url> <access-key> <secret-key>)' : table(['ALIAS', 'URL', 'ACCESS KEY'], rows.map((row) => [row.alias, row.url, row.accessKey]))));
    },
  },
  'alias remove': {
    usage: 'rc alias remove <name>',
    summary: 'forget an alias',
    positionals: [1, 1],
    run: async (context, [name]) => {
      const aliases = await context.readAliases();
      if (!aliases[name!]) throw new RcError(`unknown alias '${name}'`);
      delete aliases[name!];
      await context.writeAliases(aliases);
      context.print({ alias: name, removed: true }, () => `alias ${name} removed`);
    },
  },
  ping: {
    usage: 'rc ping <alias> [--timeout <seconds>]',
    summary: 'is the server alive? (GET /health)',
    options: { timeout: { type: 'string' } },
    positionals: [1, 1],
    run: (context, [alias], values) => probe(context, alias!, '/health', values.timeout as string | undefined),
  },
  ready: {
    usage: 'rc ready <alias> [--timeout <seconds>]',
    summary: 'does the server serve requests? (GET /health/ready; waits up to --timeout)',
    options: { timeout: { type: 'string' } },
    positionals: [1, 1],
    run: (context, [alias], values) => probe(context, alias!, '/health/ready', values.timeout as string | undefined),
  },
  mb: { usage: 'rc mb <alias>/<bucket>', summary: 'make a bucket', positionals: [1, 1], run: (context, [target]) => objects.mb(context, target!) },
  rb: { usage: 'rc rb <alias>/<bucket> [--force]', summary: 'remove a bucket (--force removes every version in it first)', options: { force: { type: 'boolean' } }, positionals: [1, 1], run: (context, [target], values) => objects.rb(context, target!, values.force === true) },
  ls: {
    usage: 'rc ls <alias>[/<bucket>[/<prefix>]] [--recursive] [--versions]',
    summary: 'list buckets, objects, or every version',
    options: { recursive: { type: 'boolean', short: 'r' }, versions: { type: 'boolean' } },
    positionals: [1, 1],
    run: (context, [target], values) => objects.ls(context, target!, { recursive: values.recursive === true, versions: values.versions === true }),
  },
  cp: { usage: 'rc cp <source> <target>', summary: 'upload a file, download an object, or copy on the server (alias/bucket/key on either side)', positionals: [2, 2], run: (context, [from, to]) => objects.cp(context, from!, to!) },
  cat: { usage: 'rc cat <alias>/<bucket>/<key> [--version-id <id>]', summary: 'write an object to standard output', options: { 'version-id': { type: 'string' } }, positionals: [1, 1], run: (context, [target], values) => objects.cat(context, target!, values['version-id'] as string | undefined) },
  rm: {
    usage: 'rc rm <alias>/<bucket>/<key> [--version-id <id>] | rc rm <alias>/<bucket>[/<prefix>] --recursive [--versions]',
    summary: 'remove an object (a version; everything under a prefix; every version)',
    options: { recursive: { type: 'boolean', short: 'r' }, versions: { type: 'boolean' }, 'version-id': { type: 'string' } },
    positionals: [1, 1],
    run: (context, [target], values) => objects.rm(context, target!, { recursive: values.recursive === true, versions: values.versions === true, ...(values['version-id'] ? { versionId: values['version-id'] as string } : {}) }),
  },
  stat: { usage: 'rc stat <alias>/<bucket>/<key> [--version-id <id>]', summary: 'show an object\'s size, ETag, class, version and metadata', options: { 'version-id': { type: 'string' } }, positionals: [1, 1], run: (context, [target], values) => objects.stat(context, target!, values['version-id'] as string | undefined) },
  du: {
    usage: 'rc du <alias>[/<bucket>] [--scan]',
    summary: 'objects, versions, delete markers and bytes per bucket from the last data-usage scan, with its age (--scan: scan now and wait)',
    options: { scan: { type: 'boolean' } },
    positionals: [1, 1],
    run: (context, [target], values) => du(context, target!, values.scan === true),
  },
  'admin pool list': { usage: 'rc admin pool list <alias>', summary: 'pools with capacity and decommission state', positionals: [1, 1], run: (context, [alias]) => adminCommands.poolList(context, alias!) },
  'admin pool status': { usage: 'rc admin pool status <alias> <pool> [--by-id]', summary: 'one pool: sets, drives, local/remote, UUIDs, state', options: byId, positionals: [2, 2], run: (context, [alias, pool], values) => adminCommands.poolStatus(context, alias!, pool!, values['by-id'] === true) },
  ...Object.fromEntries(
    ['rebalance', 'expand'].flatMap((group) =>
      ['start', 'status', 'stop'].map((action): [string, Command] => [
        `admin ${group} ${action}`,
        {
          usage: `rc admin ${group} ${action} <alias>${action === 'status' ? ' [--watch]' : ''}`,
          summary: `${rebalanceSummaries[action]}${group === 'expand' ? ' (expand is another name for rebalance)' : ''}`,
          options: watch,
          positionals: [1, 1],
          run: (context, [alias], values) => adminCommands.rebalance(context, action, alias!, values.watch === true),
        },
      ]),
    ),
  ),
  ...Object.fromEntries(
    ['start', 'cancel', 'clear', 'status'].map((action): [string, Command] => [
      `admin decommission ${action}`,
      {
        usage: `rc admin decommission ${action} <alias> ${action === 'status' ? '[<pool>]' : '<pool>'}${action === 'start' ? '[,<pool>...]' : ''} [--by-id]${action === 'status' ? ' [--watch]' : ''}`,
        summary: { start: 'queue pools for decommission (one or several)', cancel: 'cancel a queued or active decommission', clear: 'remove a failed or canceled entry', status: 'decommission progress' }[action]!,
        options: { ...byId, ...watch },
        positionals: [1, 2],
        run: (context, [alias, pools], values) => adminCommands.decommission(context, action, alias!, pools, values['by-id'] === true, values.watch === true),
      },
    ]),
  ),
  ...Object.fromEntries(
    ['start', 'status', 'stop'].map((action): [string, Command] => [
      `admin heal ${action}`,
      {
        usage: `rc admin heal ${action} <alias>${action === 'start' ? ' [--bucket <b> [--prefix <p>]] [--scan-mode normal|deep] [--remove] [--recreate] [--dry-run] [--watch]' : ' [--client-token <token>]'}${action === 'status' ? ' [--watch]' : ''}`,
        summary: { start: 'heal the deployment, a bucket or a prefix', status: 'a heal by client token, or the background heal and read-repair queue', stop: 'stop a heal by client token' }[action]!,
        options: { bucket: { type: 'string' }, prefix: { type: 'string' }, 'scan-mode': { type: 'string' }, remove: { type: 'boolean' }, recreate: { type: 'boolean' }, 'dry-run': { type: 'boolean' }, 'client-token': { type: 'string' }, ...watch },
        positionals: [1, 1],
        run: (context, [alias], values) =>
          adminCommands.heal(context, action, alias!, {
            ...(values.bucket !== undefined ? { bucket: values.bucket as string } : {}),
            ...(values.prefix !== undefined ? { prefix: values.prefix as string } : {}),
            ...(values['scan-mode'] !== undefined ? { scanMode: values['scan-mode'] as string } : {}),
            ...(values['client-token'] !== undefined ? { clientToken: values['client-token'] as string } : {}),
            remove: values.remove === true,
            recreate: values.recreate === true,
            dryRun: values['dry-run'] === true,
            watch: values.watch === true,
          }),
      },
    ]),
  ),
  ...Object.fromEntries(
    ['status', 'run'].map((action): [string, Command] => [
      `admin lifecycle ${action}`,
      {
        usage: `rc admin lifecycle ${action} <alias> [--watch]`,
        summary: { status: 'the lifecycle scanner: current and last cycle, expired by kind, errors', run: 'start a lifecycle cycle over every bucket now' }[action]!,
        options: watch,
        positionals: [1, 1],
        run: (context, [alias], values) => lifecycle(context, action, alias!, values.watch === true),
      },
    ]),
  ),
  ...Object.fromEntries(
    kmsKeyActions.map((action): [string, Command] => [
      `admin kms key ${action}`,
      {
        usage: `rc admin kms key ${action} <alias>${action === 'status' ? ' [<key-name>]' : action === 'ls' ? '' : ' <key-name>'}${action === 'rotate' ? ' [--watch]' : action === 'rm' ? ' [--force]' : ''}`,
        summary: {
          create: 'create a named key of the built-in KMS',
          ls: 'the KMS keys (the root keys first): enabled or disabled, version',
          status: 'a KMS key (the default key without a name): can it seal and unseal',
          rotate: 'a new version of a KMS key; the leader re-wraps older data keys in the background (--watch follows it)',
          disable: 'stop requests using a KMS key (KMS.DisabledException) until it is enabled',
          enable: 'let requests use a disabled KMS key again',
          rm: 'delete a named KMS key for good: what it sealed becomes unreadable (--force confirms; refused while a bucket default names it)',
        }[action],
        ...(action === 'rotate' ? { options: watch } : action === 'rm' ? { options: { force: { type: 'boolean' } } } : {}),
        positionals: action === 'status' ? [1, 2] : action === 'ls' ? [1, 1] : [2, 2],
        run: (context, [alias, keyId], values) => kmsKey(context, action, alias!, keyId, values.watch === true, values.force === true),
      },
    ]),
  ),
  'admin kms rewrap status': {
    usage: 'rc admin kms rewrap status <alias> [--watch]',
    summary: 'the background re-wrap after a key rotation: scanned, re-wrapped, failed (--watch follows it with a progress bar)',
    options: watch,
    positionals: [1, 1],
    run: (context, [alias], values) => kmsRewrapStatus(context, alias!, values.watch === true),
  },
  watch: {
    usage: 'rc watch <alias>/<bucket> [--prefix <p>] [--suffix <s>] [--events put,delete,tagging,ilm]',
    summary: "a bucket's events as they happen on any node, one line each, until Ctrl-C",
    options: { prefix: { type: 'string' }, suffix: { type: 'string' }, events: { type: 'string' } },
    positionals: [1, 1],
    run: (context, [target], values) =>
      watchBucket(context, target!, {
        ...(values.prefix !== undefined ? { prefix: values.prefix as string } : {}),
        ...(values.suffix !== undefined ? { suffix: values.suffix as string } : {}),
        ...(values.events !== undefined ? { events: values.events as string } : {}),
      }),
  },
  mirror: {
    usage: 'rc mirror <source> <target> [--watch] [--remove] [--dry-run]',
    summary: 'copy a bucket, prefix or directory to another (every version, oldest first, where both keep versions); resumable',
    options: { watch: { type: 'boolean' }, remove: { type: 'boolean' }, 'dry-run': { type: 'boolean' } },
    positionals: [2, 2],
    run: (context, [from, to], values) => mirror(context, from!, to!, { watch: values.watch === true, remove: values.remove === true, dryRun: values['dry-run'] === true }),
  },
  'admin tier add': {
    usage: 'rc admin tier add <alias> <tier-name> --endpoint <url> --bucket <bucket> --access-key <key> --secret-key <secret> [--prefix <prefix/>] [--region <region>]',
    summary: 'add a remote tier (an S3 endpoint) lifecycle transitions can move data to; it is checked first',
    options: { endpoint: { type: 'string' }, bucket: { type: 'string' }, prefix: { type: 'string' }, region: { type: 'string' }, 'access-key': { type: 'string' }, 'secret-key': { type: 'string' } },
    positionals: [2, 2],
    run: (context, [alias, name], values) => {
      const text = (option: string) => values[option] as string | undefined;
      const options = { endpoint: text('endpoint'), bucket: text('bucket'), prefix: text('prefix'), region: text('region'), accessKey: text('access-key'), secretKey: text('secret-key') };
      return tierAdd(context, alias!, name!, Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)));
    },
  },
  'admin tier ls': { usage: 'rc admin tier ls <alias>', summary: 'the remote tiers of the deployment', positionals: [1, 1], run: (context, [alias]) => tierList(context, alias!) },
  'admin tier info': { usage: 'rc admin tier info <alias> <tier-name>', summary: 'one remote tier (never its secret key)', positionals: [2, 2], run: (context, [alias, name]) => tierInfo(context, alias!, name!) },
  'admin tier rm': { usage: 'rc admin tier rm <alias> <tier-name>', summary: 'remove a remote tier (refused while a lifecycle rule or an object uses it)', positionals: [2, 2], run: (context, [alias, name]) => tierRemove(context, alias!, name!) },
  'admin event target ls': {
    usage: 'rc admin event target ls <alias>',
    summary: "the bucket notification targets (environment or API) and the node's queues (depth, oldest event, sent, failed, dropped)",
    positionals: [1, 1],
    run: (context, [alias]) => eventTargets(context, alias!),
  },
  'admin replicate add': {
    usage: 'rc admin replicate add <alias>/<bucket> --remote-bucket http(s)://ACCESS:SECRET@host:port/bucket [--region <region>]',
    summary: 'add a remote replication target of a bucket (checked first: reachable, credentials, versioning)',
    options: { 'remote-bucket': { type: 'string' }, region: { type: 'string' } },
    positionals: [1, 1],
    run: (context, [target], values) => {
      if (typeof values['remote-bucket'] !== 'string') throw new RcError('--remote-bucket http(s)://ACCESS:SECRET@host:port/bucket is required', 2);
      return replicate.replicateAdd(context, target!, values['remote-bucket'], values.region as string | undefined);
    },
  },
  'admin replicate ls': { usage: 'rc admin replicate ls <alias>[/<bucket>]', summary: 'remote replication targets (never their secrets)', positionals: [1, 1], run: (context, [target]) => replicate.replicateList(context, target!) },
  'admin replicate rm': { usage: 'rc admin replicate rm <alias>/<bucket> <arn>', summary: 'remove a remote replication target (refused while a rule names it)', positionals: [2, 2], run: (context, [target, arn]) => replicate.replicateRemove(context, target!, arn!) },
  'admin replicate status': {
    usage: 'rc admin replicate status <alias>[/<bucket>]',
    summary: "replication on the alias's node: each target's queue, completed, bytes, failures; resyncs",
    positionals: [1, 1],
    run: (context, [target]) => replicate.replicateStatus(context, target!),
  },
  'admin replicate resync': {
    usage: 'rc admin replicate resync <alias>/<bucket> [--arn <destination>] [--watch]',
    summary: 'queue every existing version for replication again (saved as it goes, resumed after a restart)',
    options: { arn: { type: 'string' }, ...watch },
    positionals: [1, 1],
    run: (context, [target], values) => replicate.replicateResync(context, target!, values.arn as string | undefined, values.watch === true),
  },
  'admin event target add': {
    usage: 'rc admin event target add <alias> <type> <id> SETTING=value... [--queue-limit <events>]',
    summary: 'add (or change) a notification target on every node: webhook endpoint=URL [auth_token=T], nats address=H:P subject=S, ...',
    options: { 'queue-limit': { type: 'string' } },
    positionals: [3, 20],
    run: (context, [alias, type, id, ...settings], values) => addEventTarget(context, alias!, type!, id!, settings, values['queue-limit'] as string | undefined),
  },
  'admin event target rm': {
    usage: 'rc admin event target rm <alias> <arn>',
    summary: 'remove a target added with add (refused while a bucket rule names it)',
    positionals: [2, 2],
    run: (context, [alias, arn]) => removeEventTarget(context, alias!, arn!),
  },
  'admin prometheus generate': {
    usage: 'rc admin prometheus generate <alias> [cluster|node]',
    summary: 'a bearer token and a Prometheus scrape configuration for /svc/metrics/cluster (or /node)',
    positionals: [1, 2],
    run: (context, [alias, view]) => prometheusGenerate(context, alias!, view),
  },
  'admin info cluster': { usage: 'rc admin info cluster <alias>', summary: 'nodes, pools and running operations', positionals: [1, 1], run: (context, [alias]) => adminCommands.info(context, 'cluster', alias!, false) },
  'admin object placement': {
    usage: 'rc admin object placement <alias>/<bucket>/<key> [--verify] [--version-id <id>]',
    summary: 'which drive holds which shard of an object (--verify checks every shard\'s bitrot hashes); read-only',
    options: { verify: { type: 'boolean' }, 'version-id': { type: 'string' } },
    positionals: [1, 1],
    run: (context, [target], values) => explorer.placement(context, target!, { verify: values.verify === true, ...(values['version-id'] ? { versionId: values['version-id'] as string } : {}) }),
  },
  'admin simulate': {
    usage: 'rc admin simulate <alias> [--fail-drive <endpoint>]... [--fail-node <host:port>]... [--bucket <b> [--prefix <p>]]',
    summary: 'what failing these drives or nodes would do to every set (and to the objects of a bucket); fails nothing',
    options: { 'fail-drive': { type: 'string', multiple: true }, 'fail-node': { type: 'string', multiple: true }, bucket: { type: 'string' }, prefix: { type: 'string' } },
    positionals: [1, 1],
    run: (context, [alias], values) =>
      explorer.simulate(context, alias!, {
        drives: (values['fail-drive'] as string[] | undefined) ?? [],
        nodes: (values['fail-node'] as string[] | undefined) ?? [],
        ...(values.bucket !== undefined ? { bucket: values.bucket as string } : {}),
        ...(values.prefix !== undefined ? { prefix: values.prefix as string } : {}),
      }),
  },
  'admin user add': { usage: 'rc admin user add <alias> <access-key> <secret-key> [--policy p1,p2]', summary: 'add a user (or give an existing one a new secret)', options: { policy: { type: 'string' } }, positionals: [3, 3], run: (context, [alias, key, secret], values) => iamCommands.user(context, 'add', alias!, key, secret, values.policy as string | undefined) },
  ...Object.fromEntries(
    (['remove', 'enable', 'disable', 'info'] as const).map((action): [string, Command] => [
      `admin user ${action}`,
      { usage: `rc admin user ${action} <alias> <access-key>`, summary: action === 'info' ? 'a user: state, policies, groups' : `${action} a user`, positionals: [2, 2], run: (context, [alias, key]) => iamCommands.user(context, action, alias!, key, undefined, undefined) },
    ]),
  ),
  'admin user list': { usage: 'rc admin user list <alias>', summary: 'users, their state and policies', positionals: [1, 1], run: (context, [alias]) => iamCommands.user(context, 'list', alias!, undefined, undefined, undefined) },
  'admin policy create': { usage: 'rc admin policy create <alias> <name> <policy.json>', summary: 'create (or replace) a policy from a JSON file', positionals: [3, 3], run: (context, [alias, name, file]) => iamCommands.policy(context, 'create', alias!, name, file) },
  ...Object.fromEntries(
    (['attach', 'detach'] as const).map((action): [string, Command] => [
      `admin policy ${action}`,
      {
        usage: `rc admin policy ${action} <alias> <policy> (<access-key> | --group <group>)`,
        summary: `${action} a policy ${action === 'attach' ? 'to' : 'from'} a user or group`,
        options: { group: { type: 'string' } },
        positionals: [2, 3],
        run: (context, [alias, name, key], values) => iamCommands.policy(context, action, alias!, name, key, values.group as string | undefined),
      },
    ]),
  ),
  'admin policy info': { usage: 'rc admin policy info <alias> <name>', summary: 'a policy document and who holds it', positionals: [2, 2], run: (context, [alias, name]) => iamCommands.policy(context, 'info', alias!, name, undefined) },
  'admin group add': { usage: 'rc admin group add <alias> <group> <access-key>...', summary: 'add users to a group (created when new)', positionals: [3, 100], run: (context, [alias, group, ...members]) => iamCommands.group(context, 'add', alias!, group, members) },
  'admin group remove': { usage: 'rc admin group remove <alias> <group> [<access-key>...]', summary: 'take users out of a group, or remove an empty group', positionals: [2, 100], run: (context, [alias, group, ...members]) => iamCommands.group(context, 'remove', alias!, group, members) },
  ...Object.fromEntries(
    (['info', 'enable', 'disable'] as const).map((action): [string, Command] => [
      `admin group ${action}`,
      { usage: `rc admin group ${action} <alias> <group>`, summary: action === 'info' ? 'a group: members, policies, state' : `${action} a group (its policies apply to its members while enabled)`, positionals: [2, 2], run: (context, [alias, group]) => iamCommands.group(context, action, alias!, group, []) },
    ]),
  ),
  'admin group list': { usage: 'rc admin group list <alias>', summary: 'groups with members and policies', positionals: [1, 1], run: (context, [alias]) => iamCommands.group(context, 'list', alias!, undefined, []) },
  'admin user svcacct add': {
    usage: 'rc admin user svcacct add <alias> [<user>] [--access-key K] [--secret-key S] [--policy file.json] [--name N] [--description D] [--expiry 90d|ISO-time]',
    summary: "a service account of a user (yours when no user is named); its secret is shown once",
    options: serviceAccountOptions,
    positionals: [1, 2],
    run: (context, [alias, user], values) => iamCommands.serviceAccount(context, 'add', alias!, user, serviceAccountValues(values)),
  },
  'admin user svcacct ls': { usage: 'rc admin user svcacct ls <alias> [<user>]', summary: "a user's service accounts (yours when no user is named)", positionals: [1, 2], run: (context, [alias, user]) => iamCommands.serviceAccount(context, 'ls', alias!, user, {}) },
  'admin user svcacct info': { usage: 'rc admin user svcacct info <alias> <access-key>', summary: 'a service account (never its secret)', positionals: [2, 2], run: (context, [alias, key]) => iamCommands.serviceAccount(context, 'info', alias!, key, {}) },
  'admin user svcacct rm': { usage: 'rc admin user svcacct rm <alias> <access-key>', summary: 'remove a service account', positionals: [2, 2], run: (context, [alias, key]) => iamCommands.serviceAccount(context, 'rm', alias!, key, {}) },
  'admin user svcacct edit': {
    usage: 'rc admin user svcacct edit <alias> <access-key> [--enable|--disable] [--policy file.json|--no-policy] [--secret-key S] [--expiry 90d|ISO-time] [--name N] [--description D]',
    summary: 'change a service account',
    options: { ...serviceAccountOptions, enable: { type: 'boolean' }, disable: { type: 'boolean' }, 'no-policy': { type: 'boolean' } },
    positionals: [2, 2],
    run: (context, [alias, key], values) => iamCommands.serviceAccount(context, 'edit', alias!, key, serviceAccountValues(values)),
  },
  'admin policy remove': { usage: 'rc admin policy remove <alias> <name>', summary: 'remove a created policy (detach it from every user first)', positionals: [2, 2], run: (context, [alias, name]) => iamCommands.policy(context, 'remove', alias!, name, undefined) },
  'admin policy list': { usage: 'rc admin policy list <alias>', summary: 'built-in and created policies', positionals: [1, 1], run: (context, [alias]) => iamCommands.policy(context, 'list', alias!, undefined, undefined) },
  'admin info disk': { usage: 'rc admin info disk <alias> [--offline]', summary: 'every drive (or only those not online)', options: { offline: { type: 'boolean' } }, positionals: [1, 1], run: (context, [alias], values) => adminCommands.info(context, 'disk', alias!, values.offline === true) },
};

async function probe(context: RcContext, aliasName: string, path: string, timeout: string | undefined): Promise<void> {
  const alias = await context.alias(aliasName);
  if (timeout !== undefined && !/^\d+(\.\d+)?$/.test(timeout)) throw new RcError(`--timeout is a number of seconds, not '${timeout}'`, 2);
  const deadline = Date.now() + Number(timeout ?? 0) * 1000;
  let last = '';
  const firstAsked = Date.now();
  for (;;) {
    const started = Date.now();
    try {
      const response = await fetch(`${alias.url}${path}`, { signal: AbortSignal.timeout(5_000) });
      if (response.ok) {
        const latencyMs = Date.now() - started;
        const waitedMs = Date.now() - firstAsked;
        const state = path === '/health' ? 'alive' : 'ready';
        context.print({ alias: aliasName, url: alias.url, ok: true, latencyMs, waitedMs }, () => `${aliasName} (${alias.url}): ${state} after waiting ${formatWait(waitedMs)} (the last answer took ${latencyMs} ms)`);
        return;
      }
      last = `answered ${response.status}`;
    } catch (error) {
      last = (error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message;
    }
    if (Date.now() >= deadline) throw new RcError(`${aliasName} (${alias.url}) is not ${path === '/health' ? 'alive' : 'ready'}: ${last}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function formatWait(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function help(prefix = ''): string {
  const matching = Object.entries(commands).filter(([name]) => name.startsWith(prefix));
  return [
    'rc: the command-line client of svc',
    '',
    table(['COMMAND', 'WHAT IT DOES'], matching.map(([, command]) => [command.usage, command.summary])),
    '',
    'Every command takes --json for output scripts can read, and --help.',
  ].join('\n');
}

/** Runs one command line; resolves with the exit code. */
export async function runRc(argv: string[], io: RcIo): Promise<number> {
  const words = argv.filter((word) => !word.startsWith('-'));
  const name = [4, 3, 2, 1].map((count) => words.slice(0, count).join(' ')).find((candidate) => commands[candidate]);
  const wantsHelp = argv.includes('--help') || argv.includes('-h') || argv.length === 0 || argv[0] === 'help';
  if (!name) {
    if (wantsHelp) {
      io.out(help(words.filter((word) => word !== 'help').join(' ')));
      return 0;
    }
    io.err(`rc: unknown command '${words.join(' ')}'\n${help(words[0] === 'admin' ? words.slice(0, 2).join(' ') : '')}`);
    return 2;
  }
  const command = commands[name]!;
  if (wantsHelp) {
    io.out(`usage: ${command.usage}\n${command.summary}`);
    return 0;
  }
  const rest = argv.slice(argv.indexOf(name.split(' ').at(-1)!) + 1);
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: rest, options: { ...json, ...command.options }, allowPositionals: true, strict: true }) as typeof parsed;
  } catch (error) {
    io.err(`rc: ${(error as Error).message}\nusage: ${command.usage}`);
    return 2;
  }
  const [min, max] = command.positionals;
  if (parsed.positionals.length < min || parsed.positionals.length > max) {
    io.err(`rc: ${name} takes ${min === max ? min : `${min} to ${max}`} argument(s)\nusage: ${command.usage}`);
    return 2;
  }
  const context = createContext(io, parsed.values.json === true);
  try {
    await command.run(context, parsed.positionals, parsed.values);
    return 0;
  } catch (error) {
    const failure = error instanceof RcError ? error : objects.s3Failure(error, name);
    io.err(`rc: ${failure.message}`);
    return failure.exitCode;
  }
}
