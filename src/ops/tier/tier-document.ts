/**
 * `tiers.bin` (docs/formats.md): the deployment's remote tiers, one state file on every drive
 * (state-store.ts: strict, versioned, quarantined when refused). A tier's secret key is kept
 * sealed (AES-256-GCM under a key derived from the root credentials, as the IAM store keeps
 * users' secrets) and is never returned by any route.
 */
import { SvcError } from '../../errors/index.js';
import { limits } from '../../util/limits.js';

export interface TierRecord {
  /** Upper case, as MinIO names tiers: `WARM`, `ARCHIVE-1`. */
  name: string;
  /** The S3 endpoint (`http(s)://host:port`). */
  endpoint: string;
  bucket: string;
  /** Prepended to every object key the tier is given (empty, or ending in `/`). */
  prefix: string;
  region: string;
  accessKey: string;
  /** The secret key, sealed (base64url). */
  sealedSecret: string;
  createdAt: string;
}

export interface TierDocument {
  generation: number;
  tiers: TierRecord[];
}

/** What a caller sees of a tier: everything but the secret. */
export type TierInfo = Omit<TierRecord, 'sealedSecret'>;

export const tierNamePattern = /^[A-Z0-9][A-Z0-9_-]{0,63}$/;
/** Names a tier may not take: the storage classes objects are written with. */
export const reservedTierNames = new Set(['STANDARD', 'REDUCED_REDUNDANCY']);
const bucketPattern = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const regionPattern = /^[a-z0-9-]{1,64}$/;

/** A tier as `rc admin tier add` gives it, checked field by field (InvalidArgument naming the field). */
export function checkTierFields(fields: { name: string; endpoint: string; bucket: string; prefix: string; region: string; accessKey: string; secretKey?: string }): void {
  const refuse = (field: string, rule: string): never => {
    throw new SvcError('InvalidArgument', `tier ${field}: ${rule}`, { field });
  };
  if (!tierNamePattern.test(fields.name)) refuse('name', '1 to 64 letters, digits, _ and - starting with a letter or digit (kept in upper case)');
  if (reservedTierNames.has(fields.name)) refuse('name', `${fields.name} is a storage class of this server, not a tier`);
  let url: URL | undefined;
  try {
    url = new URL(fields.endpoint);
  } catch {
    refuse('endpoint', 'not a URL');
  }
  if (url!.protocol !== 'http:' && url!.protocol !== 'https:') refuse('endpoint', 'must be http:// or https://');
  if (url!.pathname !== '/' || url!.search !== '' || url!.username !== '') refuse('endpoint', 'scheme, host and port only (no path, query or user)');
  if (!bucketPattern.test(fields.bucket)) refuse('bucket', 'not a valid bucket name');
  if (fields.prefix !== '' && (!fields.prefix.endsWith('/') || fields.prefix.startsWith('/') || fields.prefix.length > 256)) refuse('prefix', "empty, or up to 256 characters ending in '/' (not starting with one)");
  if (!regionPattern.test(fields.region)) refuse('region', 'lower-case letters, digits and -');
  if (fields.accessKey === '' || fields.accessKey.length > 128) refuse('access key', '1 to 128 characters');
  if (fields.secretKey !== undefined && (fields.secretKey === '' || fields.secretKey.length > 128)) refuse('secret key', '1 to 128 characters');
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const recordFields = ['name', 'endpoint', 'bucket', 'prefix', 'region', 'accessKey', 'sealedSecret', 'createdAt'] as const;

/** The strict decoder of tiers.bin's payload: anything else is refused, never guessed. */
export function validateTierDocument(value: unknown): TierDocument {
  const bad = (what: string): never => {
    throw new SvcError('CorruptFormat', `tiers.bin: ${what}`);
  };
  if (!isObject(value)) return bad('not an object');
  for (const name of Object.keys(value)) if (name !== 'generation' && name !== 'tiers') bad(`unknown field ${name}`);
  if (!Number.isSafeInteger(value.generation) || (value.generation as number) < 0) bad('generation');
  if (!Array.isArray(value.tiers) || value.tiers.length > limits.maxTiers) return bad('tiers');
  const tiers = value.tiers.map((tier, index): TierRecord => {
    if (!isObject(tier) || Object.keys(tier).some((name) => !(recordFields as readonly string[]).includes(name))) return bad(`tiers[${index}]`);
    for (const field of recordFields) if (typeof tier[field] !== 'string') bad(`tiers[${index}].${field}`);
    const record = tier as unknown as TierRecord;
    try {
      checkTierFields({ ...record });
    } catch (error) {
      bad(`tiers[${index}]: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (record.sealedSecret === '' || Number.isNaN(Date.parse(record.createdAt))) bad(`tiers[${index}]`);
    return { name: record.name, endpoint: record.endpoint, bucket: record.bucket, prefix: record.prefix, region: record.region, accessKey: record.accessKey, sealedSecret: record.sealedSecret, createdAt: record.createdAt };
  });
  if (new Set(tiers.map((tier) => tier.name)).size !== tiers.length) bad('duplicate tier name');
  return { generation: value.generation as number, tiers };
}

export function tierInfo(record: TierRecord): TierInfo {
  const { sealedSecret: _secret, ...info } = record;
  return info;
}
