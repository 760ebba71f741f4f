/** Example answers for the admin reference, taken from a two-pool, four-drives-per-pool server. Each is checked against its route's schema by a test. */

export const exampleSlot = {
  set: 0,
  slot: 0,
  endpoint: '/data/pool1/d1',
  local: true,
  uuid: '56d006d2-0b08-4668-ae8f-e7f6c144079f',
  state: 'online',
  totalBytes: 1073741824,
  usedBytes: 1171,
  freeBytes: 1073740653,
};

export const exampleDecommissionEntry = {
  pool: 1,
  pattern: '/data/pool2/d{1...4}',
  id: 'dd1b4b4d-bb91-4569-beb4-4ac57982c0de',
  state: 'active',
  queuedMs: 1795586464013,
  startedMs: 1795586464014,
  updatedMs: 1795586464014,
  unresolved: [],
  progress: { objects: 12, versions: 14, bytes: 1048576, totalObjects: 40, currentBucket: 'photos', currentObject: '2026/11/cat.jpg' },
  elapsedMs: 1200,
  etaMs: 2800,
};

export const examplePool = {
  id: 0,
  cmdline: '/data/pool1/d{1...4}',
  endpointCount: 4,
  setCount: 1,
  drivesPerSet: 4,
  totalBytes: 4294967296,
  usedBytes: 4684,
  freeBytes: 4294962612,
  decommission: null,
};

export const examplePoolStatus = { ...examplePool, sets: [{ set: 0, drives: [exampleSlot, { ...exampleSlot, slot: 1, endpoint: '/data/pool1/d2', uuid: '31b090b4-94c9-48aa-9130-6fb3233debee' }] }] };

export const exampleRebalanceStatus = {
  id: '43cf2fd3-592e-4e53-923f-82c5f936dc67',
  goalUsed: 0.42,
  startedAt: '2026-11-25T06:01:03.975Z',
  stoppedAt: null,
  stopPropagation: null,
  pools: [
    { id: 0, status: 'active', stopping: false, used: 0.61, lastError: '', cleanupWarnings: [], progress: { objects: 120, versions: 120, bytes: 125829120, bytesToMove: 840000000, remainingBuckets: 2, currentBucket: 'photos', elapsedMs: 9000, etaMs: 51000 } },
    { id: 1, status: 'completed', stopping: false, used: 0.23, lastError: '', cleanupWarnings: [], progress: { objects: 0, versions: 0, bytes: 0, bytesToMove: 0, remainingBuckets: 0, elapsedMs: 0 } },
  ],
};

export const exampleHealStatus = {
  clientToken: 'c22a7ff6-2209-411d-970c-1229bade5b3a',
  path: { bucket: 'photos' },
  options: { recursive: true, dryRun: false, remove: false, recreate: false, scanMode: 'normal', updateParity: false },
  status: 'finished',
  startedAt: '2026-11-25T06:01:03.994Z',
  finishedAt: '2026-11-25T06:01:04.120Z',
  counts: { objectsScanned: 1, objectsHealed: 1, objectsUnrecoverable: 0, shardsHealed: 1, failures: 0 },
  items: [{ type: 'object', pool: 0, set: 0, bucket: 'photos', object: 'cat.jpg', outcome: 'healed', shardsHealed: 1 }],
};

export const exampleBackgroundHeal = {
  mrf: { queued: 0, awaitingDrives: 1, limit: 10000, processed: 3, failed: 0, dropped: 0, retried: 2, gaveUp: 0, notQueued: 0 },
  background: [],
  healingDrives: [],
  stateFilesQuarantined: 0,
};

const quorums = {
  read: { needed: 2, formula: 'K', worked: 'N=4, K=2, M=2: 2' },
  write: { needed: 3, formula: 'K, or K + 1 when K = M', worked: 'N=4, K=2, M=2: K = M, so K + 1 = 3' },
  delete: { needed: 3, formula: 'floor(N/2) + 1 (majority)', worked: 'N=4, K=2, M=2: floor(4/2) + 1 = 3' },
};

export const examplePlacement = {
  bucket: 'photos',
  key: 'cat.jpg',
  pool: 0,
  set: 0,
  version: { versionId: 'null', sizeBytes: 5, etag: '5d41402abc4b2a76b9719d911017c592', modTimeMs: 1795586463864, storageClass: 'STANDARD' },
  geometry: { setDriveCount: 4, dataShards: 2, parityShards: 2, blockSizeBytes: 1048576, inline: true, parts: [{ number: 1, sizeBytes: 5 }] },
  quorums,
  now: { readable: true, writable: true, deletable: true, moreFailuresTolerated: { read: 2, write: 1, delete: 1 }, offlineDrives: 0 },
  metaPath: 'photos/cat.jpg/xl.meta',
  verified: true,
  shards: [
    { index: 1, role: 'data', slot: 3, drive: { endpoint: '/data/pool1/d4', node: 'local', driveId: '13ab7897-5b11-4ecb-8dec-70a05d9f0b6a', state: 'online' }, inline: true, files: [{ part: 1, sizeBytes: 11 }], status: 'ok' },
    { index: 2, role: 'data', slot: 0, drive: { endpoint: '/data/pool1/d1', node: 'local', driveId: '56d006d2-0b08-4668-ae8f-e7f6c144079f', state: 'online' }, inline: true, files: [{ part: 1, sizeBytes: 11 }], status: 'ok' },
  ],
};

export const exampleSimulate = {
  failed: { drives: ['/data/pool1/d1'], nodes: [] },
  sets: [
    {
      pool: 0,
      set: 0,
      setDriveCount: 4,
      failedSlots: [0],
      offlineNow: [],
      classes: [{ storageClass: 'STANDARD', dataShards: 2, parityShards: 2, quorums, readable: true, writable: true, deletable: true, moreFailuresTolerated: { read: 1, write: 0, delete: 0 } }],
    },
  ],
  summary: { readable: true, writable: true, deletable: true },
  scope: { bucket: 'photos', prefix: '', objectsScanned: 1, objectsUnreadable: 0, scanLimit: 10000, complete: true, geometries: [{ dataShards: 2, parityShards: 2, objects: 1, unreadable: 0 }], unreadableSample: [] },
};

export const exampleUser = { accessKey: 'alice', enabled: true, policies: ['readonly'], groups: ['staff'], createdMs: 1795586463950 };

export const exampleGroup = { name: 'staff', enabled: true, members: ['alice'], policies: ['readonly'], createdMs: 1795586463950 };

export const exampleServiceAccount = { accessKey: 'Q3AM3UQ867SPQQA43P2F', parent: 'alice', enabled: true, name: 'backup', expiresMs: 1827122463950, createdMs: 1795586463950 };

export const examplePolicyDocument = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject', 's3:ListBucket'], Resource: ['arn:aws:s3:::photos', 'arn:aws:s3:::photos/*'] }] };
