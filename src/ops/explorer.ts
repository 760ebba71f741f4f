/**
 * Erasure made visible: where an object's shards are (placement, optionally verified) and what a
 * set of failed drives or nodes would do to every set and to the objects of a scope (failure
 * what-if). Both read the live layout and metadata and change nothing. The admin API and the
 * console call this one service; the JSON shapes are documented in the README.
 */
import { SvcError } from '../errors/index.js';
import { fateOf, quorumsFor, type Fate, type Quorums } from '../erasure/fate.js';
import type { ErasureSet, ObjectLayer, SlotPlacement } from '../object/index.js';
import { checkBucketName, checkObjectKey } from '../object/index.js';
import { limits } from '../util/limits.js';

export interface DriveView {
  endpoint: string;
  /** The node holding the drive (`host:port`, or `local` for a path endpoint). */
  node: string;
  /** The drive id this slot expects (format.json). */
  driveId: string;
  state: 'online' | 'offline';
}

export interface SetView {
  pool: number;
  set: number;
  erasureSet: ErasureSet;
  /** Slot order. */
  drives: DriveView[];
}

export interface ExplorerSource {
  objects: ObjectLayer;
  /** Every set of every pool with its drives' current state. */
  sets(): Promise<SetView[]>;
  /** The parities new writes of a pool use. */
  parities(pool: number): { standard: number; rrs: number };
}

export interface PlacementRequest {
  bucket: string;
  key: string;
  versionId?: string;
  verify?: boolean;
}

export interface ShardReport {
  index: number;
  role: 'data' | 'parity';
  slot: number;
  drive: DriveView;
  inline: boolean;
  files: { part: number; path?: string; file?: string; sizeBytes: number }[];
  status?: SlotPlacement['status'];
  problem?: string;
}

export interface PlacementReport {
  bucket: string;
  key: string;
  pool: number;
  set: number;
  version: { versionId: string; sizeBytes: number; etag: string; modTimeMs: number; storageClass: string };
  geometry: { setDriveCount: number; dataShards: number; parityShards: number; blockSizeBytes: number; inline: boolean; parts: { number: number; sizeBytes: number }[] };
  quorums: Quorums;
  /** What the object can do now, with the drives that are offline now. */
  now: Fate & { offlineDrives: number };
  metaPath: string;
  verified: boolean;
  /** In shard index order. */
  shards: ShardReport[];
}

export interface SimulateRequest {
  /** Endpoints of drives to treat as failed. */
  drives?: string[];
  /** Nodes (`host:port`, or `local`) whose every drive is treated as failed. */
  nodes?: string[];
  /** Count the objects of a bucket (and prefix) that would become unreadable. */
  scope?: { bucket: string; prefix?: string };
}

export interface ClassFate extends Fate {
  storageClass: 'STANDARD' | 'REDUCED_REDUNDANCY';
  dataShards: number;
  parityShards: number;
  quorums: Quorums;
}

export interface SetFate {
  pool: number;
  set: number;
  setDriveCount: number;
  /** Slots treated as failed: named, on a named node, or offline now. */
  failedSlots: number[];
  offlineNow: number[];
  classes: ClassFate[];
}

export interface ScopeFate {
  bucket: string;
  prefix: string;
  /** Latest versions whose stored geometry was read (delete markers are not counted). */
  objectsScanned: number;
  objectsUnreadable: number;
  /** At most this many objects are read; `complete` is false when the scope holds more. */
  scanLimit: number;
  complete: boolean;
  /** Per stored geometry found: how many objects, how many unreadable. */
  geometries: { dataShards: number; parityShards: number; objects: number; unreadable: number }[];
  /** Up to 100 unreadable keys, for a look. */
  unreadableSample: string[];
}

export interface SimulateReport {
  failed: { drives: string[]; nodes: string[] };
  sets: SetFate[];
  /** Every set keeps each verdict (per class). */
  summary: { readable: boolean; writable: boolean; deletable: boolean };
  scope?: ScopeFate;
}

export interface Explorer {
  placement(request: PlacementRequest): Promise<PlacementReport>;
  simulate(request: SimulateRequest): Promise<SimulateReport>;
}

export function createExplorer(source: ExplorerSource): Explorer {
  return {
    placement: (request) => placement(source, request),
    simulate: (request) => simulate(source, request),
  };
}

async function placement(source: ExplorerSource, request: PlacementRequest): Promise<PlacementReport> {
  checkBucketName(request.bucket);
  checkObjectKey(request.key);
  await source.objects.requireBucket(request.bucket);
  const pool = await source.objects.poolHolding(request.bucket, request.key);
  if (pool === undefined) throw new SvcError('NoSuchKey', undefined, { bucket: request.bucket, key: request.key });
  const erasureSet = source.objects.setFor(pool, request.key);
  const view = (await source.sets()).find((candidate) => candidate.erasureSet === erasureSet);
  if (!view) throw new SvcError('InternalError', `no view of pool ${pool}'s set for the key`);
  const placed = await erasureSet.placeObject(request.bucket, request.key, {
    ...(request.versionId !== undefined ? { versionId: request.versionId } : {}),
    ...(request.verify ? { verify: true } : {}),
  });
  const setDriveCount = placed.slots.length;
  const offlineDrives = view.drives.filter((drive) => drive.state === 'offline').length;
  const shards = placed.slots
    .map((slot): ShardReport => {
      const drive = view.drives[slot.slot]!;
      return {
        index: slot.shardIndex,
        role: slot.role,
        slot: slot.slot,
        drive,
        inline: placed.inline,
        files: slot.files.map((file) => ({ ...file, ...(file.path !== undefined ? { file: `${drive.endpoint.replace(/\/+$/, '')}/${file.path}` } : {}) })),
        ...(slot.status !== undefined ? { status: slot.status } : {}),
        ...(slot.problem !== undefined ? { problem: slot.problem } : {}),
      };
    })
    .sort((a, b) => a.index - b.index);
  return {
    bucket: request.bucket,
    key: request.key,
    pool,
    set: view.set,
    version: placed.version,
    geometry: { setDriveCount, dataShards: placed.dataShards, parityShards: placed.parityShards, blockSizeBytes: placed.blockSizeBytes, inline: placed.inline, parts: placed.parts },
    quorums: quorumsFor(setDriveCount, placed.parityShards),
    now: { ...fateOf(setDriveCount, placed.parityShards, offlineDrives), offlineDrives },
    metaPath: placed.metaPath,
    verified: request.verify === true,
    shards,
  };
}

async function simulate(source: ExplorerSource, request: SimulateRequest): Promise<SimulateReport> {
  const views = await source.sets();
  const drives = request.drives ?? [];
  const nodes = request.nodes ?? [];
  if (drives.length + nodes.length > limits.simulateFailuresMax) throw new SvcError('InvalidArgument', `at most ${limits.simulateFailuresMax} drives and nodes may be named`);
  const known = views.flatMap((view) => view.drives);
  const validDrives = [...new Set(known.map((candidate) => candidate.endpoint))];
  const validNodes = [...new Set(known.map((candidate) => candidate.node))];
  for (const drive of drives) if (!validDrives.includes(drive)) throw new SvcError('InvalidArgument', `no drive of this deployment has the endpoint '${drive}'; its drives are: ${namesOf(validDrives)}`, { drive });
  for (const node of nodes) if (!validNodes.includes(node)) throw new SvcError('InvalidArgument', `no node of this deployment is '${node}'; its nodes are: ${namesOf(validNodes)}`, { node });
  const sets = views.map((view) => setFate(source, view, new Set(drives), new Set(nodes)));
  const summary = {
    readable: sets.every((set) => set.classes.every((entry) => entry.readable)),
    writable: sets.every((set) => set.classes.every((entry) => entry.writable)),
    deletable: sets.every((set) => set.classes.every((entry) => entry.deletable)),
  };
  const report: SimulateReport = { failed: { drives, nodes }, sets, summary };
  if (request.scope) report.scope = await scopeFate(source, views, sets, request.scope);
  return report;
}

/** A list of valid names for a refusal, cut after a few. */
function namesOf(names: string[], shown = 16): string {
  return names.length > shown ? `${names.slice(0, shown).join(', ')}, ... (${names.length - shown} more)` : names.join(', ');
}

function setFate(source: ExplorerSource, view: SetView, drives: Set<string>, nodes: Set<string>): SetFate {
  const offlineNow = slotsWhere(view, (drive) => drive.state === 'offline');
  const failedSlots = slotsWhere(view, (drive) => drive.state === 'offline' || drives.has(drive.endpoint) || nodes.has(drive.node));
  const setDriveCount = view.drives.length;
  const parities = source.parities(view.pool);
  const classes = ([['STANDARD', parities.standard], ['REDUCED_REDUNDANCY', parities.rrs]] as const).map(([storageClass, parityShards]): ClassFate => ({
    storageClass,
    dataShards: setDriveCount - parityShards,
    parityShards,
    quorums: quorumsFor(setDriveCount, parityShards),
    ...fateOf(setDriveCount, parityShards, failedSlots.length),
  }));
  return { pool: view.pool, set: view.set, setDriveCount, failedSlots, offlineNow, classes };
}

function slotsWhere(view: SetView, test: (drive: DriveView) => boolean): number[] {
  return view.drives.flatMap((drive, slot) => (test(drive) ? [slot] : []));
}

/** Reads the stored geometry of the scope's latest versions, set by set, up to the scan limit. */
async function scopeFate(source: ExplorerSource, views: SetView[], fates: SetFate[], scope: { bucket: string; prefix?: string }): Promise<ScopeFate> {
  checkBucketName(scope.bucket);
  await source.objects.requireBucket(scope.bucket);
  const prefix = scope.prefix ?? '';
  const result: ScopeFate = { bucket: scope.bucket, prefix, objectsScanned: 0, objectsUnreadable: 0, scanLimit: limits.simulateScanMaxObjects, complete: true, geometries: [], unreadableSample: [] };
  for (const [index, view] of views.entries()) {
    const failed = fates[index]!.failedSlots.length;
    for await (const entry of view.erasureSet.list(scope.bucket, { prefix })) {
      if (entry.kind !== 'object') continue;
      const latest = entry.versions[0];
      if (!latest || latest.deleteMarker) continue;
      if (result.objectsScanned >= result.scanLimit) {
        result.complete = false;
        return result;
      }
      result.objectsScanned += 1;
      const readable = fateOf(latest.dataShards + latest.parityShards, latest.parityShards, failed).readable;
      countGeometry(result, latest.dataShards, latest.parityShards, readable);
      if (!readable) {
        result.objectsUnreadable += 1;
        if (result.unreadableSample.length < 100) result.unreadableSample.push(entry.key);
      }
    }
  }
  return result;
}

function countGeometry(result: ScopeFate, dataShards: number, parityShards: number, readable: boolean): void {
  let entry = result.geometries.find((candidate) => candidate.dataShards === dataShards && candidate.parityShards === parityShards);
  if (!entry) {
    entry = { dataShards, parityShards, objects: 0, unreadable: 0 };
    result.geometries.push(entry);
  }
  entry.objects += 1;
  if (!readable) entry.unreadable += 1;
}
