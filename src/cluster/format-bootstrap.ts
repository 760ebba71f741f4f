/**
 * Format quorum at startup. Each drive of a pool carries `.svc.sys/format.json` with the
 * deployment id, its own drive id and the pool's sets (drive ids per slot). On a fresh pool every
 * drive gets a new format; on an existing pool the stored layout must match the configured one
 * exactly (drive count, set width) or startup fails permanently with PoolTopologyMismatch
 * (UnsupportedSnsdExpansion for a single-drive deployment) and nothing is written.
 */
import { isSvcError, SvcError } from '../errors/index.js';
import { systemDir, type Drive } from '../drive/index.js';
import type { FormatJson } from '../format/format-json-types.js';
import { decodeFormatJson, encodeFormatJson, newFormats } from '../format/format-json.js';

export const formatPath = `${systemDir}/format.json`;

export type DriveFormatState =
  | { state: 'formatted'; format: FormatJson }
  | { state: 'unformatted' }
  | { state: 'offline'; error: unknown }
  | { state: 'corrupt'; error: unknown };

export interface PoolFormatInput {
  poolIndex: number;
  setCount: number;
  setDriveCount: number;
  /** Drives of the pool in endpoint order (drive i = set floor(i / width), slot i % width). */
  drives: (Drive | undefined)[];
  singleDrive: boolean;
  /**
   * The lowest stored position this pool may have: one more than the previous pool's. Pools keep
   * their relative order; a decommissioned pool removed from the arguments leaves a gap.
   */
  storedIndexFloor?: number;
}

export interface PoolFormatResult {
  deploymentId: string;
  /** Drive ids per set and slot, as stored. */
  sets: string[][];
  /** The pool's position as stored in format.json (its launch position when it was formatted). */
  storedPoolIndex: number;
  /** Per drive: ok, or why it is not used (offline, unformatted awaiting heal, foreign). */
  driveStates: ('ok' | 'offline' | 'unformatted' | 'refused')[];
  freshlyFormatted: boolean;
}

/** Format quorum is not reached yet (drives offline, peers not up): startup waits and retries. */
export class FormatPending extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FormatPending';
  }
}

export async function readFormats(drives: (Drive | undefined)[]): Promise<DriveFormatState[]> {
  return Promise.all(drives.map(readFormat));
}

async function readFormat(drive: Drive | undefined): Promise<DriveFormatState> {
  if (!drive) return { state: 'offline', error: new SvcError('DriveOffline') };
  try {
    return { state: 'formatted', format: decodeFormatJson(await drive.readFile(formatPath)) };
  } catch (error) {
    if (isSvcError(error, 'FileNotFound')) return { state: 'unformatted' };
    if (isSvcError(error, 'CorruptFormat') || isSvcError(error, 'UnsupportedFormat')) return { state: 'corrupt', error };
    return { state: 'offline', error }; // includes a peer refusing this node's launch arguments (InvalidConfiguration)
  }
}

/**
 * Decides and applies the pool's format. `deploymentId` is the id to use for a fresh
 * deployment (the first pool's, for later pools). Fresh formatting needs every drive online
 * and unformatted; a pool where some drives are formatted is an existing pool.
 */
export async function establishPoolFormat(
  input: PoolFormatInput,
  states: DriveFormatState[],
  options: { deploymentId: string; newId: () => string; mayFormat: boolean },
): Promise<PoolFormatResult> {
  const formatted = states.flatMap((state) => (state.state === 'formatted' ? [state.format] : []));
  if (formatted.length === 0) {
    if (!options.mayFormat) throw new FormatPending(`pool ${input.poolIndex}: waiting for the node of the first endpoint to format the new drives`);
    return formatFresh(input, states, options);
  }
  const reference = majorityFormat(formatted);
  checkTopology(input, reference);
  const agreeing = formatted.filter((format) => format.deploymentId === reference.deploymentId).length;
  const needed = Math.floor(input.drives.length / 2) + 1;
  if (agreeing < needed) throw new FormatPending(`pool ${input.poolIndex}: ${agreeing} of the ${needed} formatted drives needed for format quorum answer`);
  const driveStates = states.map((state, driveIndex) => classify(state, reference, driveIndex, input.setDriveCount));
  return { deploymentId: reference.deploymentId, sets: reference.sets, storedPoolIndex: reference.poolIndex, driveStates, freshlyFormatted: false };
}

async function formatFresh(
  input: PoolFormatInput,
  states: DriveFormatState[],
  options: { deploymentId: string; newId: () => string },
): Promise<PoolFormatResult> {
  const notReady = states.filter((state) => state.state !== 'unformatted').length;
  if (notReady > 0) throw new FormatPending(`pool ${input.poolIndex}: ${notReady} drive(s) offline or unreadable; a new pool is formatted only with every drive online`);
  const storedPoolIndex = Math.max(input.poolIndex, input.storedIndexFloor ?? 0);
  const formats = newFormats({
    deploymentId: options.deploymentId,
    poolIndex: storedPoolIndex,
    setCount: input.setCount,
    setDriveCount: input.setDriveCount,
    layout: input.singleDrive ? 'single' : 'erasure',
    newId: options.newId,
  });
  await Promise.all(input.drives.map((drive, index) => drive!.writeFileAtomic(formatPath, encodeFormatJson(formats[index]!))));
  return { deploymentId: options.deploymentId, sets: formats[0]!.sets, storedPoolIndex, driveStates: states.map(() => 'ok'), freshlyFormatted: true };
}

/** The format most drives agree on (deployment id and sets); ties keep the first seen. */
function majorityFormat(formats: FormatJson[]): FormatJson {
  const counts = new Map<string, { format: FormatJson; count: number }>();
  for (const format of formats) {
    const signature = JSON.stringify([format.deploymentId, format.poolIndex, format.layout, format.sets]);
    const entry = counts.get(signature);
    if (entry) entry.count += 1;
    else counts.set(signature, { format, count: 1 });
  }
  return [...counts.values()].sort((a, b) => b.count - a.count)[0]!.format;
}

function checkTopology(input: PoolFormatInput, stored: FormatJson): void {
  const storedDrives = stored.sets.reduce((sum, set) => sum + set.length, 0);
  const storedWidth = stored.sets[0]?.length ?? 0;
  const configuredDrives = input.setCount * input.setDriveCount;
  if (storedDrives === configuredDrives && storedWidth === input.setDriveCount && stored.poolIndex >= (input.storedIndexFloor ?? input.poolIndex)) {
    if ((stored.layout === 'single') === input.singleDrive) return;
  }
  const details = {
    poolIndex: input.poolIndex,
    storedDriveCount: storedDrives,
    storedSetDriveCount: storedWidth,
    storedPoolIndex: stored.poolIndex,
    configuredDriveCount: configuredDrives,
    configuredSetDriveCount: input.setDriveCount,
  };
  const summary = `pool ${input.poolIndex}: stored layout has ${storedDrives} drive(s) in sets of ${storedWidth} at position ${stored.poolIndex}, configured ${configuredDrives} drive(s) in sets of ${input.setDriveCount}`;
  if (stored.layout === 'single') {
    throw new SvcError('UnsupportedSnsdExpansion', `${summary}; a single-drive deployment cannot be expanded or widened`, details);
  }
  throw new SvcError('PoolTopologyMismatch', `${summary}; restore the original endpoints and set width`, details);
}

function classify(state: DriveFormatState, reference: FormatJson, driveIndex: number, width: number): PoolFormatResult['driveStates'][number] {
  if (state.state === 'offline') return 'offline';
  if (state.state === 'unformatted') return 'unformatted';
  if (state.state === 'corrupt') return 'refused';
  const expected = reference.sets[Math.floor(driveIndex / width)]?.[driveIndex % width];
  const sameDeployment = state.format.deploymentId === reference.deploymentId;
  return sameDeployment && state.format.driveId === expected ? 'ok' : 'refused';
}
