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
  const settings: Record<string, string> = {};
  const { required, optional } = settingsOf[type];
  for (const setting of [...required, ...optional]) {
    const value = env[variable(type, setting, id)]?.trim();
    if (value !== undefined && value !== '') settings[setting] = value;
    else if (required.includes(setting)) throw new SvcError('InvalidConfiguration', `${variable(type, setting, id)} must be set for the ${type} target ${id}`, { variable: variable(type, setting, id) });
  }
  checkSettings(type, id, settings);
  const limitName = variable(type, 'QUEUE_LIMIT', id);
  const limitText = env[limitName]?.trim();
  const queueLimitEntries = limitText === undefined || limitText === '' ? limits.eventQueueLimitDefault : Number(limitText);
  if (!Number.isInteger(queueLimitEntries) || queueLimitEntries < 1 || queueLimitEntries > limits.eventQueueLimitMax) {
    throw new SvcError('InvalidConfiguration', `${limitName} must be a whole number from 1 to ${limits.eventQueueLimitMax}`, { variable: limitName });
  }
  return { id, type, arn: targetArn(id, type), queueLimitEntries, settings };
}

function checkSettings(type: TargetType, id: string, settings: Record<string, string>): void {
  const bad = (setting: string, expected: string): SvcError => new SvcError('InvalidConfiguration', `${variable(type, setting, id)} ${expected}`, { variable: variable(type, setting, id) });
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
