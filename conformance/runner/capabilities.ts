/**
 * Capability probing: before the checks run, a few cheap requests find out what the target offers.
 * A check that needs something the target lacks is reported "not applicable" with the probe's
 * reason instead of failing, so a store without versioning is measured on what it does serve.
 * Each probe works in a bucket of its own and must see the feature work, not merely be accepted.
 */
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  GetObjectLockConfigurationCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  PutObjectLegalHoldCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { chunkedPut, presignedUrl, type RawAnswer } from './http.js';
import { sendSignedV2 } from './sigv2.js';
import { customerAlgorithmHeader, customerKeyHeaders, kmsKeyIdHeader, sseHeader } from './sse.js';
import { capabilityNames, type Capabilities, type Capability, type CapabilityState, type Target } from './check.js';

export { capabilityNames, type Capabilities, type Capability, type CapabilityState };

type Probe = (target: Target, bucket: string) => Promise<string | CapabilityState>;

/** Errors that say the request was not allowed, not that the feature is missing: the checks then run and fail. */
const refusals = new Set(['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'RequestTimeTooSkewed']);

/** A raw answer that refuses the credentials: the feature is there, its checks run and fail loudly. */
const refusedRaw = (answer: RawAnswer): CapabilityState | undefined => (refusals.has(answer.code) ? { present: true, detail: `unknown, the probe was refused (${answer.status} ${answer.code})` } : undefined);
const described = (answer: RawAnswer) => `${answer.status}${answer.code ? ` ${answer.code}` : ''}`;

const text = async (target: Target, bucket: string, key: string) => new TextDecoder().decode(await (await target.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToByteArray());

const probes: Record<Exclude<Capability, 'multi-pool'>, Probe> = {
  async admin(target) {
    const answer = await target.admin('GET', '/svc/admin/v3/pools/list');
    if (answer.status === 200 && Array.isArray(answer.body.pools)) return `${answer.body.pools.length} pool(s)`;
    // An admin API that refuses these credentials is there: its checks run (and fail), they are not "not applicable".
    if (typeof answer.body.Code === 'string' && answer.status !== 404 && answer.status !== 501) return `pools/list refused: ${answer.status} ${answer.body.Code}`;
    return { present: false, detail: `GET /svc/admin/v3/pools/list answered ${answer.status}` };
  },
  /** The IAM routes answer the run's (root) credentials with a list of users. */
  async iam(target) {
    const answer = await target.admin('GET', '/svc/admin/v4/iam/users');
    if (answer.status === 200 && Array.isArray(answer.body.users)) return `${answer.body.users.length} user(s)`;
    if (typeof answer.body.Code === 'string' && answer.status === 403) return `iam/users refused: ${answer.status} ${answer.body.Code}`;
    return { present: false, detail: `GET /svc/admin/v4/iam/users answered ${answer.status}${typeof answer.body.Code === 'string' ? ` ${answer.body.Code}` : ''}` };
  },
  async versioning(target, bucket) {
    await target.s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    const ids = [];
    for (const body of ['1', '2']) ids.push((await target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'versioned', Body: body }))).VersionId);
    if (!ids[0] || ids[0] === 'null' || ids[0] === ids[1]) return { present: false, detail: `two PUTs on a versioning-enabled bucket got version ids ${JSON.stringify(ids)}` };
    return 'version ids assigned';
  },
  async multipart(target, bucket) {
    const { UploadId } = await target.s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'mp' }));
    const { ETag } = await target.s3.send(new UploadPartCommand({ Bucket: bucket, Key: 'mp', UploadId, PartNumber: 1, Body: 'part' }));
    await target.s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'mp', UploadId, MultipartUpload: { Parts: [{ ETag, PartNumber: 1 }] } }));
    return (await text(target, bucket, 'mp')) === 'part' ? 'a one-part upload completes' : { present: false, detail: 'a completed one-part upload does not read back' };
  },
  async checksums(target, bucket) {
    const answer = await target.raw({ method: 'PUT', path: `/${bucket}/crc`, body: 'checksummed', headers: { 'x-amz-checksum-crc32': 'AAAAAA==' } });
    if (answer.status === 200) return { present: false, detail: 'a PUT with a wrong x-amz-checksum-crc32 was stored' };
    return `a wrong checksum is refused (${answer.code || answer.status})`;
  },
  async 'aws-chunked'(target, bucket) {
    const answer = await chunkedPut(target.options, { mode: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD', path: `/${bucket}/chunked`, payload: Buffer.from('chunked body'), chunkBytes: 8192 });
    if (answer.status !== 200) return { present: false, detail: `a signed aws-chunked PUT answered ${answer.status} ${answer.code}` };
    const stored = await text(target, bucket, 'chunked');
    return stored === 'chunked body' ? 'signed chunks decoded' : { present: false, detail: `a signed aws-chunked PUT stored ${JSON.stringify(stored.slice(0, 40))}` };
  },
  async 'aws-chunked-trailer'(target, bucket) {
    const answer = await chunkedPut(target.options, { mode: 'STREAMING-UNSIGNED-PAYLOAD-TRAILER', path: `/${bucket}/trailer`, payload: Buffer.from('abc'), chunkBytes: 8192, trailer: { name: 'x-amz-checksum-crc32', value: 'NSRBwg==' } });
    if (answer.status !== 200) return { present: false, detail: `an aws-chunked PUT with a checksum trailer answered ${answer.status} ${answer.code}` };
    const stored = await text(target, bucket, 'trailer');
    return stored === 'abc' ? 'trailers decoded' : { present: false, detail: `an aws-chunked PUT with a trailer stored ${JSON.stringify(stored.slice(0, 40))}` };
  },
  async presigned(target, bucket) {
    await target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'shared', Body: 'shared' }));
    const response = await fetch(await presignedUrl(target.options, 'GET', `/${bucket}/shared`));
    return response.status === 200 && (await response.text()) === 'shared' ? 'a presigned GET reads' : { present: false, detail: `a presigned GET answered ${response.status}` };
  },
  /** The bucket was created with object lock: it must say so, and a legal hold must refuse a delete. */
  async 'object-lock'(target, bucket) {
    const config = await target.s3.send(new GetObjectLockConfigurationCommand({ Bucket: bucket }));
    if (config.ObjectLockConfiguration?.ObjectLockEnabled !== 'Enabled') return { present: false, detail: 'a bucket created with object lock does not report it' };
    const { VersionId } = await target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'held', Body: 'held', ObjectLockLegalHoldStatus: 'ON' }));
    const refused = await target.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'held', VersionId })).then(() => false, () => true);
    await target.s3.send(new PutObjectLegalHoldCommand({ Bucket: bucket, Key: 'held', VersionId, LegalHold: { Status: 'OFF' } }));
    return refused ? 'a legal hold refuses a delete' : { present: false, detail: 'a version under legal hold was deleted' };
  },
  /** A PUT asking for SSE-S3 is answered with the header, and reads back. */
  async 'sse-s3'(target, bucket) {
    const answer = await target.raw({ method: 'PUT', path: `/${bucket}/sse-s3`, body: 'sealed', headers: { [sseHeader]: 'AES256' } });
    if (answer.status !== 200) return refusedRaw(answer) ?? { present: false, detail: `a PUT with ${sseHeader}: AES256 answered ${described(answer)}` };
    if (answer.headers[sseHeader] !== 'AES256') return { present: false, detail: `a PUT with ${sseHeader}: AES256 was answered without that header (the request for encryption ignored)` };
    return (await text(target, bucket, 'sse-s3')) === 'sealed' ? 'an SSE-S3 PUT is answered AES256 and reads back' : { present: false, detail: 'an SSE-S3 object does not read back' };
  },
  /** Only with a key named by the run (--kms-key-id): a PUT under it is answered aws:kms. */
  async 'sse-kms'(target, bucket) {
    const keyId = target.options.kmsKeyId;
    if (!keyId) return { present: false, detail: 'no KMS key named (--kms-key-id <key> names one of the target)' };
    const answer = await target.raw({ method: 'PUT', path: `/${bucket}/sse-kms`, body: 'sealed', headers: { [sseHeader]: 'aws:kms', [kmsKeyIdHeader]: keyId } });
    if (answer.status !== 200) return refusedRaw(answer) ?? { present: false, detail: `a PUT with ${sseHeader}: aws:kms and key ${keyId} answered ${described(answer)}` };
    if (answer.headers[sseHeader] !== 'aws:kms') return { present: false, detail: `a PUT with ${sseHeader}: aws:kms was answered ${answer.headers[sseHeader] ?? 'without that header'}` };
    return `an SSE-KMS PUT under ${keyId} is answered aws:kms`;
  },
  /**
   * A PUT with a customer key is answered with the key's algorithm and reads back with it. AWS
   * takes customer keys over TLS only: over plain HTTP a target like AWS refuses, and the SSE-C
   * checks are n/a unless the endpoint is https (or the target takes them over HTTP, a test setting).
   */
  async 'sse-c'(target, bucket) {
    const key = randomBytes(32);
    const plainHttp = new URL(target.options.endpoint).protocol === 'http:';
    const answer = await target.raw({ method: 'PUT', path: `/${bucket}/sse-c`, body: 'sealed', headers: customerKeyHeaders(key) });
    if (answer.status !== 200) {
      const why = plainHttp && answer.status === 400 ? ' (AWS takes customer keys over TLS only: use an https endpoint, or a test deployment that takes them over plain HTTP)' : '';
      return refusedRaw(answer) ?? { present: false, detail: `an SSE-C PUT${plainHttp ? ' over plain HTTP' : ''} answered ${described(answer)}${why}` };
    }
    if (answer.headers[customerAlgorithmHeader] !== 'AES256') return { present: false, detail: `an SSE-C PUT was answered without ${customerAlgorithmHeader} (the customer key ignored)` };
    const read = await target.raw({ method: 'GET', path: `/${bucket}/sse-c`, headers: customerKeyHeaders(key) });
    return read.status === 200 && read.text === 'sealed' ? 'an SSE-C PUT and a GET with the key' : { present: false, detail: `a GET of an SSE-C object with its key answered ${described(read)}` };
  },
  /**
   * A GET signed with Signature Version 2 (`Authorization: AWS key:signature`) reads an object
   * back. A server that takes V4 alone answers with another refusal (AWS: 400 InvalidRequest).
   */
  async sigv2(target, bucket) {
    await target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'v2', Body: 'signed with v2' }));
    const answer = await sendSignedV2(target.options, { method: 'GET', path: `/${bucket}/v2` });
    if (answer.status === 200 && answer.text === 'signed with v2') return 'a V2-signed GET reads';
    if (['SignatureDoesNotMatch', 'InvalidAccessKeyId', 'RequestTimeTooSkewed'].includes(answer.code)) return { present: true, detail: `unknown, the probe was refused (${described(answer)})` };
    return { present: false, detail: `a GET signed with Signature Version 2 answered ${described(answer)}` };
  },
};

/** Probes every capability; a probe that throws counts as absent, with the error as the reason. */
export async function probeCapabilities(target: Target): Promise<Capabilities> {
  const found = {} as Capabilities;
  for (const [name, probe] of Object.entries(probes) as [Exclude<Capability, 'multi-pool'>, Probe][]) {
    try {
      const bucket = name === 'admin' || name === 'iam' ? '' : await target.makeBucket(`probe-${name}`, { objectLock: name === 'object-lock' });
      const outcome = await probe(target, bucket);
      found[name] = typeof outcome === 'string' ? { present: true, detail: outcome } : outcome;
    } catch (error) {
      const detail = `${(error as Error).name}: ${(error as Error).message}`.slice(0, 200);
      found[name] = { present: refusals.has((error as Error).name), detail: refusals.has((error as Error).name) ? `unknown, the probe was refused (${detail})` : detail };
    }
  }
  const pools = /^(\d+) pool/.exec(found.admin.detail)?.[1];
  found['multi-pool'] = pools !== undefined ? { present: Number(pools) > 1, detail: `${pools} pool(s)` } : { present: false, detail: found.admin.present ? 'pool count unknown' : 'no admin API' };
  return found;
}

/** Why a check cannot apply to this target, or undefined when everything it needs is there. */
export function notApplicableReason(needs: Capability[] | undefined, capabilities: Capabilities): string | undefined {
  const missing = (needs ?? []).filter((name) => !capabilities[name].present);
  return missing.length === 0 ? undefined : `target lacks ${missing.map((name) => `${name} (${capabilities[name].detail})`).join(', ')}`;
}
