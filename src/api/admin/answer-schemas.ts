/** The shapes the admin routes answer with, as JSON Schema (route-schema.ts builders), shared by the routes that return them. */
import { boolean, integer, list, nullable, number, object, oneOfValues, openObject, text, type JsonSchema } from './route-schema.js';

const count = (description: string) => integer(description, { minimum: 0 });
const bytes = (description: string) => integer(description, { minimum: 0 });

export const slotSchema = object(
  {
    set: count('erasure set index in the pool'),
    slot: count('position of the drive in its set'),
    endpoint: text('the drive endpoint (a path, or http://host:port/path)'),
    local: boolean('the drive is on the node that answered'),
    uuid: text('the drive id this slot expects (format.json)'),
    state: oneOfValues(['online', 'offline'], 'whether the drive answers now'),
    totalBytes: bytes('drive capacity'),
    usedBytes: bytes('bytes used on the drive'),
    freeBytes: bytes('bytes free on the drive'),
  },
  { description: 'One drive slot of an erasure set.' },
);

const decommissionProgress = object(
  {
    objects: count('objects (keys) moved'),
    versions: count('versions moved'),
    bytes: bytes('bytes moved'),
    totalObjects: count('objects found in the pool when the run started (the basis of the ETA)'),
    currentBucket: text('the bucket being moved'),
    currentObject: text('the object being moved'),
  },
  { optional: ['currentBucket', 'currentObject'], description: 'what has moved so far' },
);

export const decommissionEntrySchema = object(
  {
    pool: count('the pool index'),
    pattern: text('the pool launch pattern'),
    id: text('this run of the entry (a retry gets a new id)'),
    state: oneOfValues(['queued', 'active', 'completed', 'failed', 'canceled'], 'the entry state (SPEC "States and transitions")'),
    queuedMs: integer('when it was queued (ms since the epoch)'),
    startedMs: integer('when it became active'),
    finishedMs: integer('when it completed, failed or was canceled'),
    updatedMs: integer('last change'),
    reason: text('why it failed or was canceled'),
    unresolved: list(text('bucket/key'), 'listing entries that could not be moved after every attempt (at most 100)'),
    progress: decommissionProgress,
    elapsedMs: integer('time active so far'),
    etaMs: integer('estimated time left'),
    entriesInFlight: count('objects being moved now (leader only)'),
    entriesInFlightPeak: count('the most objects moved at once in the last run (leader only)'),
  },
  { optional: ['startedMs', 'finishedMs', 'reason', 'elapsedMs', 'etaMs', 'entriesInFlight', 'entriesInFlightPeak'], description: 'A decommission entry (persisted in pool.bin).' },
);

export const poolInfoProperties: Record<string, JsonSchema> = {
  id: count('zero-based pool index'),
  cmdline: text('the launch pattern of the pool'),
  endpointCount: count('drive endpoints in the pool'),
  setCount: count('erasure sets in the pool'),
  drivesPerSet: count('drives per erasure set'),
  totalBytes: bytes('capacity of the pool drives'),
  usedBytes: bytes('bytes used'),
  freeBytes: bytes('bytes free'),
  decommission: nullable(decommissionEntrySchema),
};

export const poolInfoSchema = object(poolInfoProperties, { description: 'A pool: layout, capacity and its decommission entry (or null).' });

export const setOfSlotsSchema = object({ set: count('erasure set index'), drives: list(slotSchema, 'the drives of the set in slot order') });

export const poolStatusSchema = object({ ...poolInfoProperties, sets: list(setOfSlotsSchema, 'every set with its drives') }, { description: 'A pool with its sets and drives.' });

export const decommissionEntriesSchema = object({ entries: list(decommissionEntrySchema, 'decommission entries') });

const rebalanceProgress = object(
  {
    objects: count('objects moved'),
    versions: count('versions moved'),
    bytes: bytes('bytes moved'),
    bytesToMove: bytes('bytes the pool had to shed at start to reach the goal'),
    remainingBuckets: count('buckets still to walk'),
    currentBucket: text('the bucket being moved'),
    currentObject: text('the object being moved'),
    elapsedMs: integer('time running'),
    etaMs: integer('estimated time left'),
  },
  { optional: ['currentBucket', 'currentObject', 'etaMs'], description: 'what has moved so far' },
);

export const rebalanceStatusSchema = object(
  {
    id: { type: ['string', 'null'], description: 'the rebalance id (a uuid), null before the first rebalance' },
    goalUsed: number('the used fraction every pool is brought to, fixed at start'),
    startedAt: text('start time (ISO 8601)'),
    stoppedAt: { type: ['string', 'null'], description: 'stop time (ISO 8601), null while running' },
    stopPropagation: nullable(object({ complete: boolean('every node took the stop'), failedPeers: list(text('host:port'), 'nodes that did not') }, { description: 'whether every node took the stop (null while running)' })),
    pools: list(
      object({
        id: count('pool index'),
        status: oneOfValues(['active', 'stopping', 'completed', 'stopped', 'failed'], 'the pool state'),
        stopping: boolean('a stop is under way'),
        used: number('used fraction (0..1) at the last measurement'),
        lastError: text('the last error, empty when none'),
        cleanupWarnings: list(text('a warning'), 'copies whose source could not be removed'),
        progress: rebalanceProgress,
      }),
      'per pool',
    ),
  },
  { optional: ['goalUsed', 'startedAt', 'stoppedAt', 'stopPropagation'], description: 'Rebalance status (rebalance.bin).' },
);

const healCounts = object({
  objectsScanned: count('objects looked at'),
  objectsHealed: count('objects rebuilt'),
  objectsUnrecoverable: count('objects with more shards missing than parity'),
  shardsHealed: count('shards written'),
  failures: count('objects the heal could not finish'),
}, { description: 'totals so far' });

const driveStates = list(object({ endpoint: text('drive endpoint'), state: text('shard state on that drive') }), 'per drive');

export const healStatusSchema = object(
  {
    clientToken: text('the heal id: pass it as clientToken to ask for status or to stop'),
    path: object({ bucket: text('bucket'), prefix: text('prefix') }, { optional: ['bucket', 'prefix'], description: 'what is healed: everything, a bucket, or a prefix' }),
    options: object(
      {
        recursive: boolean('heal everything below the path'),
        dryRun: boolean('report only'),
        remove: boolean('remove dangling objects'),
        recreate: boolean('recreate missing buckets'),
        scanMode: oneOfValues(['normal', 'deep'], 'deep reads and checks every shard'),
        updateParity: boolean('rewrite objects to the current parity'),
        pool: count('the pool of the erasure set healed'),
        set: count('the erasure set healed'),
      },
      { optional: ['pool', 'set'], description: 'the options in force' },
    ),
    status: oneOfValues(['running', 'finished', 'stopped', 'failed'], 'the heal state'),
    startedAt: text('start time (ISO 8601)'),
    finishedAt: text('end time (ISO 8601)'),
    counts: healCounts,
    lastError: text('why it failed'),
    items: list(
      object(
        {
          type: oneOfValues(['format', 'bucket', 'object', 'upload'], 'what was healed (upload: the directory of a multipart upload left behind on some drives after it ended)'),
          pool: count('pool'),
          set: count('set'),
          bucket: text('bucket'),
          object: text('object key'),
          outcome: text('what happened'),
          reason: text('why'),
          before: driveStates,
          after: driveStates,
          shardsHealed: count('shards written'),
        },
        { optional: ['bucket', 'object', 'reason', 'before', 'after', 'shardsHealed'] },
      ),
      'the latest items',
    ),
  },
  { optional: ['finishedAt', 'lastError'], description: 'A heal sequence.' },
);

export const backgroundHealSchema = object(
  {
  mrf: object({ queued: count('objects waiting'), awaitingDrives: count('objects to heal again later: their heal found drives offline'), limit: count('queue bound'), processed: count('healed'), failed: count('not healed'), dropped: count('dropped when the queue was full'), retried: count('heals tried again after drives were offline'), gaveUp: count('objects given up after every retry (a heal sequence covers them)'), notQueued: count('reports of damaged objects not queued because read-repair is off (SVC_HEAL_MRF=off)') }, { description: 'the queue of objects reads and writes found damaged' }),
  background: list(
    object({ task: text('task id'), status: text('task state'), pool: count('pool'), set: count('set'), counts: healCounts }, { optional: ['pool', 'set'] }),
    'background erasure-set heals (replaced drives, unclean shutdown)',
  ),
  healingDrives: list(
    object({
      endpoint: text('drive endpoint'),
      pool: count('pool'),
      set: count('set'),
      slot: count('slot'),
      state: oneOfValues(['waiting', 'healing', 'healed'], 'replacement state'),
      objectsHealed: count('objects rebuilt'),
      objectsFailed: count('objects not rebuilt'),
    }),
    'replaced drives',
  ),
  stateFilesQuarantined: count('state files under .svc.sys refused when read and moved to .svc.sys/quarantine since start (docs/formats.md)'),
  },
  { description: 'Background heal: the MRF queue, erasure-set heals and replaced drives.' },
);

export const replacementRecoverySchema = object({
  instances: list(
    object(
      {
        pool: count('pool'),
        set: count('set'),
        slot: count('slot'),
        endpoint: text('drive endpoint'),
        driveId: text('the failed drive id, kept by the slot'),
        detectedAt: text('when the empty drive was found (ISO 8601)'),
        startedAt: text('heal start'),
        finishedAt: text('heal end'),
        objectsHealed: count('objects rebuilt'),
        objectsFailed: count('objects not rebuilt'),
        completed: boolean('the set heal finished with every object of the drive rebuilt'),
      },
      { optional: ['startedAt', 'finishedAt'] },
    ),
    'replaced drives',
  ),
});

const nodeProperties = {
  endpoint: text('host:port, or local for path endpoints'),
  state: oneOfValues(['online', 'offline'], 'online when any of its drives answers'),
  drivesOnline: count('drives answering'),
};

export const snapshotSchema = object(
  {
    deploymentId: text('the deployment id (format.json)'),
    generatedAt: text('when the snapshot was taken (ISO 8601)'),
    thisNode: text('host:port of the node that answered'),
    nodes: list(object({ ...nodeProperties, drives: count('drives of the node') }), 'nodes'),
    pools: list(poolStatusSchema, 'pools with sets and drives'),
    operations: object({ rebalance: rebalanceStatusSchema, decommission: list(decommissionEntrySchema, 'decommission entries'), heal: backgroundHealSchema }, { description: 'running operations' }),
  },
  { description: 'The whole cluster at one moment.' },
);

export const serversInfoSchema = object({
  servers: list(object({ ...nodeProperties, drives: list(object({ pool: count('pool'), ...(slotSchema.properties as Record<string, JsonSchema>) }), 'the drives of the node') }), 'nodes'),
});

export const capabilitiesSchema = object({
  server: text('always svc'),
  version: text('server version'),
  adminApi: object({ v3: list(text('group'), 'v3 route groups'), v4: list(text('group'), 'v4 route groups') }, { description: 'admin route groups per API version' }),
  driveBackends: list(text('backend'), 'backends this build has'),
  driveBackend: text('the backend in use'),
  faultInjection: boolean('SVC_FAULT_INJECTION is on'),
  storageClasses: list(object({ pool: count('pool'), STANDARD: text('EC:<parity>'), REDUCED_REDUNDANCY: text('EC:<parity>') }), 'parity of new writes per pool'),
  listQuorum: text('SVC_LIST_OBJECTS_QUORUM'),
  limits: object({
    erasureBlockSizeBytes: bytes('erasure block'),
    minPartSizeBytes: bytes('smallest multipart part but the last'),
    maxPartNumber: count('highest part number'),
    lockExpiryMs: integer('lock lease'),
    mrfQueueLimit: count('MRF queue bound'),
    decommissionBucketConcurrency: count('buckets moved at once'),
    decommissionEntryConcurrency: count('objects moved at once'),
    rebalanceMaxAttempts: count('attempts per object'),
    lifecycleObjectsPerSecond: count('keys a second the lifecycle scanner walks at most (SVC_LIFECYCLE_OBJECTS_PER_SECOND)'),
    lifecycleIntervalMs: count('time between lifecycle cycles (SVC_LIFECYCLE_INTERVAL)'),
  }, { description: 'limits in force' }),
});

const quorum = object({ needed: count('drives needed'), formula: text('the SPEC formula'), worked: text('the formula with these numbers') }, { description: 'drives needed, with the formula' });
const quorumsSchema = object({ read: quorum, write: quorum, delete: quorum }, { description: 'read, write and delete quorums' });
const tolerated = object({ read: integer('more drive failures reads survive (-1: already lost)'), write: integer('same for writes'), delete: integer('same for deletes') }, { description: 'more drive failures each survives' });
const fateProperties = { readable: boolean('reads work'), writable: boolean('writes work'), deletable: boolean('deletes work'), moreFailuresTolerated: tolerated };
const driveView = object({ endpoint: text('drive endpoint'), node: text('host:port, or local'), driveId: text('the drive id the slot expects'), state: oneOfValues(['online', 'offline'], 'state now') }, { description: 'the drive holding the shard' });

export const placementSchema = object({
  bucket: text('bucket'),
  key: text('object key'),
  pool: count('pool holding the object'),
  set: count('erasure set holding the object'),
  version: object({ versionId: text('version id ("null" unversioned)'), sizeBytes: bytes('object size'), etag: text('ETag'), modTimeMs: integer('modification time'), storageClass: text('storage class') }, { description: 'the version placed' }),
  geometry: object({
    setDriveCount: count('N'),
    dataShards: count('K'),
    parityShards: count('M'),
    blockSizeBytes: bytes('erasure block'),
    inline: boolean('stored inside xl.meta'),
    parts: list(object({ number: count('part number'), sizeBytes: bytes('part size') }), 'parts'),
  }, { description: 'the stored erasure geometry (xl.meta)' }),
  quorums: quorumsSchema,
  now: object({ ...fateProperties, offlineDrives: count('drives of the set offline now') }, { description: 'what the object can do with the drives offline now' }),
  metaPath: text("the object's xl.meta, relative to a drive"),
  verified: boolean('every shard was read and checked (verify=true)'),
  shards: list(
    object(
      {
        index: count('1-based shard index'),
        role: oneOfValues(['data', 'parity'], 'data for 1..K, parity above'),
        slot: count('slot holding the shard'),
        drive: driveView,
        inline: boolean('the shard is inline in that drive xl.meta'),
        files: list(object({ part: count('part number'), path: text('path relative to the drive'), file: text('drive endpoint joined with the path'), sizeBytes: bytes('size the file must have') }, { optional: ['path', 'file'] }), 'shard files'),
        status: oneOfValues(['ok', 'missing', 'corrupt', 'offline'], 'with verify=true'),
        problem: text('what is wrong, in words'),
      },
      { optional: ['status', 'problem'] },
    ),
    'shards in index order',
  ),
});

export const simulateSchema = object(
  {
    failed: object({ drives: list(text('endpoint'), 'drives named'), nodes: list(text('node'), 'nodes named') }, { description: 'what the request named' }),
    sets: list(
      object({
        pool: count('pool'),
        set: count('set'),
        setDriveCount: count('N'),
        failedSlots: list(count('slot'), 'slots treated as failed'),
        offlineNow: list(count('slot'), 'slots offline now'),
        classes: list(
          object({ storageClass: oneOfValues(['STANDARD', 'REDUCED_REDUNDANCY'], 'class'), dataShards: count('K'), parityShards: count('M'), quorums: quorumsSchema, ...fateProperties }),
          'per storage class, at the parity new writes use',
        ),
      }),
      'per erasure set',
    ),
    summary: object({ readable: boolean('every set and class stays readable'), writable: boolean('... writable'), deletable: boolean('... deletable') }, { description: 'each verdict over every set and class' }),
    scope: object({
      bucket: text('bucket'),
      prefix: text('prefix'),
      objectsScanned: count('latest versions read'),
      objectsUnreadable: count('of those, unreadable under the failure'),
      scanLimit: count('at most this many objects are read'),
      complete: boolean('the scope held no more than scanLimit objects'),
      geometries: list(object({ dataShards: count('K'), parityShards: count('M'), objects: count('objects'), unreadable: count('unreadable') }), 'per stored geometry'),
      unreadableSample: list(text('key'), 'up to 100 unreadable keys'),
    }, { description: 'with a scope: the objects counted' }),
  },
  { optional: ['scope'] },
);

export const userSchema = object({ accessKey: text('access key'), enabled: boolean('may sign requests'), policies: list(text('policy name'), 'attached policies'), groups: list(text('group name'), 'groups it is a member of'), createdMs: integer('creation time') }, { description: 'the user (never its secret)' });
export const userAnswerSchema = object({ user: userSchema });
export const usersSchema = object({ users: list(userSchema, 'users, by access key') });
export const policiesSchema = object({ policies: list(object({ name: text('policy name'), builtIn: boolean('one of the built-in policies'), document: openObject('the IAM policy document') }), 'built-in policies first') });

export const faultPlanSchema = openObject('a fault plan: per-operation errors, latency, corruption, offline, torn writes, ENOSPC (fault-injection/faulty-drive.ts)');

export const groupSchema = object({ name: text('group name'), enabled: boolean('its policies apply to its members'), members: list(text('access key'), 'members'), policies: list(text('policy name'), 'attached policies'), createdMs: integer('creation time') });
export const groupAnswerSchema = object({ group: groupSchema });
export const groupsSchema = object({ groups: list(groupSchema, 'groups, by name') });
const serviceAccountFields = {
  accessKey: text('access key'),
  parent: text('the user it belongs to'),
  enabled: boolean('may sign requests (and its user is enabled)'),
  name: text('a name'),
  description: text('a description'),
  policy: openObject('its inline policy, which narrows its user\'s permissions'),
  expiresMs: integer('refused from this time on'),
  createdMs: integer('creation time'),
};
const serviceAccountOptional = ['name', 'description', 'policy', 'expiresMs'];
const serviceAccountSchema = object(serviceAccountFields, { optional: serviceAccountOptional, description: 'a service account (never its secret)' });
export const serviceAccountAnswerSchema = object({ serviceAccount: serviceAccountSchema });
export const newServiceAccountSchema = object({ serviceAccount: object({ ...serviceAccountFields, secretKey: text('the secret key: shown this once, never again') }, { optional: serviceAccountOptional }) });
export const serviceAccountsSchema = object({ serviceAccounts: list(serviceAccountSchema, 'service accounts, by access key') });
export const policyAnswerSchema = object({ policy: object({ name: text('policy name'), builtIn: boolean('one of the built-in policies'), document: openObject('the IAM policy document'), users: list(text('access key'), 'users holding it'), groups: list(text('group'), 'groups holding it') }) });
