/**
 * Event targets from the environment, with MinIO's names under the `SVC_` prefix
 * (docs/notifications.md): `SVC_NOTIFY_<TYPE>_ENABLE_<ID>=on` turns target `<ID>` of `<TYPE>` on,
 * and `SVC_NOTIFY_<TYPE>_<SETTING>_<ID>` gives its settings (without `_<ID>`: the target `_`).
 * Its ARN is `arn:svc:sqs::<ID>:<type>`. A missing or bad setting is InvalidConfiguration naming
 * the variable.
 */
import { SvcError } from '../../errors/index.js';
import { limits } from '../../util/limits.js';
import { targetArn } from './event-names.js';

export const targetTypes = ['webhook', 'nats', 'redis', 'mqtt', 'amqp', 'postgres'] as const;
export type TargetType = (typeof targetTypes)[number];

/** The settings each type reads: required ones first, then optional ones. */
const settingsOf: Record<TargetType, { required: string[]; optional: string[] }> = {
  webhook: { required: ['ENDPOINT'], optional: ['AUTH_TOKEN'] },
  nats: { required: ['ADDRESS', 'SUBJECT'], optional: ['USERNAME', 'PASSWORD', 'TOKEN'] },
  redis: { required: ['ADDRESS', 'KEY'], optional: ['FORMAT', 'PASSWORD', 'USER'] },
  mqtt: { required: ['BROKER', 'TOPIC'], optional: ['QOS', 'USERNAME', 'PASSWORD'] },
  amqp: { required: ['URL', 'EXCHANGE'], optional: ['ROUTING_KEY', 'EXCHANGE_TYPE'] },
  postgres: { required: ['CONNECTION_STRING', 'TABLE'], optional: ['FORMAT'] },
};

export interface TargetConfig {
  id: string;
  type: TargetType;
  arn: string;
  /** Events the target's queue holds at most (`..._QUEUE_LIMIT_<ID>`). */
  queueLimitEntries: number;
  /** The settings by name (`ENDPOINT`, `ADDRESS`, ...), as given. */
  settings: Record<string, string>;
}

/** Settings that are secrets: never logged nor answered. */
export const secretSettings = new Set(['AUTH_TOKEN', 'PASSWORD', 'TOKEN', 'CONNECTION_STRING', 'URL']);

const enabledValues = new Set(['on', 'true', '1', 'yes', 'enable', 'enabled']);
const idPattern = /^[A-Za-z0-9_-]{1,64}$/;

function variable(type: TargetType, setting: string, id: string): string {
  return id === '_' ? `SVC_NOTIFY_${type.toUpperCase()}_${setting}` : `SVC_NOTIFY_${type.toUpperCase()}_${setting}_${id}`;
}

export function readTargetConfigs(env: Record<string, string | undefined>): TargetConfig[] {
  const targets: TargetConfig[] = [];
  for (const type of targetTypes) {
    const enable = new RegExp(`^SVC_NOTIFY_${type.toUpperCase()}_ENABLE(?:_(.+))?$`);
    for (const [name, value] of Object.entries(env)) {
      const match = enable.exec(name);
      if (!match || value === undefined || !enabledValues.has(value.trim().toLowerCase())) continue;
      const id = match[1] ?? '_';
      if (!idPattern.test(id)) throw new SvcError('InvalidConfiguration', `${name}: a target id is 1 to 64 letters, digits, '-' or '_'`, { variable: name });
      targets.push(targetConfig(type, id, env));
    }
  }
  return targets.sort((first, second) => first.arn.localeCompare(second.arn));
}

function targetConfig(type: TargetType, id: string, env: Record<string, string | undefined>): TargetConfig {
  const limitName = variable(type, 'QUEUE_LIMIT', id);
  const settings: Record<string, string> = {};
  for (const setting of [...settingsOf[type].required, ...settingsOf[type].optional]) {
    const value = env[variable(type, setting, id)]?.trim();
    if (value !== undefined && value !== '') settings[setting] = value;
  }
  return checkedConfig(type, id, settings, env[limitName]?.trim(), { code: 'InvalidConfiguration', nameOf: (setting) => variable(type, setting, id) });
}

/** How a bad setting is named: the environment variable (at start) or the setting in an admin request. */
interface SettingNames {
  code: 'InvalidConfiguration' | 'InvalidArgument';
  nameOf(setting: string): string;
}

function checkedConfig(type: TargetType, id: string, settings: Record<string, string>, limitText: string | undefined, names: SettingNames): TargetConfig {
  const bad = (setting: string, expected: string): SvcError => new SvcError(names.code, `${names.nameOf(setting)} ${expected}`, names.code === 'InvalidConfiguration' ? { variable: names.nameOf(setting) } : { field: names.nameOf(setting) });
  for (const setting of settingsOf[type].required) if (settings[setting] === undefined) throw bad(setting, `must be set for the ${type} target ${id}`);
  checkSettings(type, settings, bad);
  const queueLimitEntries = limitText === undefined || limitText === '' ? limits.eventQueueLimitDefault : Number(limitText);
  if (!Number.isInteger(queueLimitEntries) || queueLimitEntries < 1 || queueLimitEntries > limits.eventQueueLimitMax) {
    throw bad('QUEUE_LIMIT', `must be a whole number from 1 to ${limits.eventQueueLimitMax}`);
  }
  return { id, type, arn: targetArn(id, type), queueLimitEntries, settings };
}

/**
 * A target as the admin API adds it: its type, id and settings by their names (`ENDPOINT`,
 * `AUTH_TOKEN`...), checked as the environment's are; a bad one is InvalidArgument naming the setting.
 */
export function apiTargetConfig(input: { type: string; id: string; settings: Record<string, string>; queueLimit?: number }): TargetConfig {
  if (!(targetTypes as readonly string[]).includes(input.type)) throw new SvcError('InvalidArgument', `type must be one of ${targetTypes.join(', ')}, not '${input.type}'`, { field: 'type' });
  const type = input.type as TargetType;
  if (!idPattern.test(input.id)) throw new SvcError('InvalidArgument', `id: a target id is 1 to 64 letters, digits, '-' or '_', not '${input.id.slice(0, 80)}'`, { field: 'id' });
  const known = [...settingsOf[type].required, ...settingsOf[type].optional];
  const unknown = Object.keys(input.settings).filter((name) => !known.includes(name));
  if (unknown.length > 0) throw new SvcError('InvalidArgument', `settings: a ${type} target has no setting ${unknown.join(', ')} (it takes ${known.join(', ')})`, { field: 'settings' });
  const settings = Object.fromEntries(Object.entries(input.settings).map(([name, value]) => [name, value.trim()]).filter(([, value]) => value !== ''));
  return checkedConfig(type, input.id, settings, input.queueLimit === undefined ? undefined : String(input.queueLimit), { code: 'InvalidArgument', nameOf: (setting) => (setting === 'QUEUE_LIMIT' ? 'queueLimit' : `settings.${setting}`) });
}

/** The settings each type takes, required ones first (what `rc admin event target add` lists). */
export function settingsOfType(type: TargetType): { required: string[]; optional: string[] } {
  return settingsOf[type];
}

function checkSettings(type: TargetType, settings: Record<string, string>, bad: (setting: string, expected: string) => SvcError): void {
  const url = (setting: string, protocols: string[]): void => {
    let parsed: URL;
    try {
      parsed = new URL(settings[setting]!);
    } catch {
      throw bad(setting, `must be a URL (${protocols.join(', ')})`);
    }
    if (!protocols.includes(parsed.protocol)) throw bad(setting, `must be a URL (${protocols.join(', ')})`);
  };
  if (type === 'webhook') url('ENDPOINT', ['http:', 'https:']);
  if (type === 'mqtt') url('BROKER', ['tcp:', 'mqtt:', 'mqtts:', 'ssl:', 'tls:', 'ws:', 'wss:']);
  if (type === 'amqp') url('URL', ['amqp:', 'amqps:']);
  if ((type === 'redis' || type === 'postgres') && settings.FORMAT !== undefined && !['namespace', 'access'].includes(settings.FORMAT)) throw bad('FORMAT', 'must be namespace or access');
  if (type === 'mqtt' && settings.QOS !== undefined && !['0', '1', '2'].includes(settings.QOS)) throw bad('QOS', 'must be 0, 1 or 2');
  if (type === 'amqp' && settings.EXCHANGE_TYPE !== undefined && !['direct', 'fanout', 'topic', 'headers'].includes(settings.EXCHANGE_TYPE)) throw bad('EXCHANGE_TYPE', 'must be direct, fanout, topic or headers');
  if (type === 'postgres' && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(settings.TABLE!)) throw bad('TABLE', 'must be a plain table name (letters, digits, _)');
  if ((type === 'nats' || type === 'redis') && !/^[^\s:/]+:\d{1,5}$/.test(settings.ADDRESS!)) throw bad('ADDRESS', 'must be host:port');
}

/** The settings that may be shown: secrets are left out. */
export function publicSettings(config: TargetConfig): Record<string, string> {
  return Object.fromEntries(Object.entries(config.settings).filter(([name]) => !secretSettings.has(name)));
}
