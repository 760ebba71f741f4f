/**
 * Event targets added through the admin API (`rc admin event target add`), kept in the cluster
 * state file `.svc.sys/event-targets.bin` (magic `SVET`, docs/formats.md): a whole copy on every
 * drive, the newest generation wins, a copy that does not decode is quarantined (ops/state-store.ts).
 * The document holds each target's settings as given, secrets included (as iam.bin holds secret
 * keys); the admin API never answers them. Strict: an unknown field, type or setting refuses the copy.
 */
import { SvcError } from '../../errors/index.js';
import type { StateDocument } from '../state-store.js';
import { apiTargetConfig, targetTypes, type TargetConfig } from './target-config.js';

export const eventTargetsFileName = 'event-targets.bin';
export const eventTargetsMagic = 'SVET';

export interface StoredTarget {
  type: string;
  id: string;
  settings: Record<string, string>;
  queueLimit: number;
}

export interface EventTargetsDocument extends StateDocument {
  version: 1;
  targets: StoredTarget[];
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const refuse = (why: string): SvcError => new SvcError('CorruptFormat', `${eventTargetsFileName}: ${why}`);

function exactKeys(value: Record<string, unknown>, keys: string[], at: string): void {
  const extra = Object.keys(value).filter((key) => !keys.includes(key));
  if (extra.length > 0) throw refuse(`${at} has unknown field(s) ${extra.join(', ')}`);
}

/** Decodes a copy strictly; every target must still be a valid configuration. */
export function validateEventTargets(payload: unknown): EventTargetsDocument {
  if (!isRecord(payload)) throw refuse('not an object');
  exactKeys(payload, ['version', 'generation', 'targets'], 'the document');
  if (payload.version !== 1) throw refuse(`version ${String(payload.version)} is not 1`);
  if (typeof payload.generation !== 'number' || !Number.isSafeInteger(payload.generation) || payload.generation < 0) throw refuse('generation is not a whole number');
  if (!Array.isArray(payload.targets)) throw refuse('targets is not a list');
  const targets = payload.targets.map((target, index): StoredTarget => {
    if (!isRecord(target)) throw refuse(`targets[${index}] is not an object`);
    exactKeys(target, ['type', 'id', 'settings', 'queueLimit'], `targets[${index}]`);
    const { type, id, settings, queueLimit } = target;
    if (typeof type !== 'string' || !(targetTypes as readonly string[]).includes(type) || typeof id !== 'string' || typeof queueLimit !== 'number') throw refuse(`targets[${index}] has a bad type, id or queue limit`);
    if (!isRecord(settings) || !Object.values(settings).every((value) => typeof value === 'string')) throw refuse(`targets[${index}].settings is not a map of strings`);
    const stored = { type, id, settings: settings as Record<string, string>, queueLimit };
    try {
      configOf(stored);
    } catch (error) {
      throw refuse(`targets[${index}]: ${(error as Error).message}`);
    }
    return stored;
  });
  const arns = targets.map((target) => configOf(target).arn);
  if (new Set(arns).size !== arns.length) throw refuse('a target appears twice');
  return { version: 1, generation: payload.generation, targets };
}

export function configOf(target: StoredTarget): TargetConfig {
  return apiTargetConfig(target);
}

export function storedTarget(config: TargetConfig): StoredTarget {
  return { type: config.type, id: config.id, settings: { ...config.settings }, queueLimit: config.queueLimitEntries };
}

export const emptyEventTargets = (): EventTargetsDocument => ({ version: 1, generation: 0, targets: [] });
