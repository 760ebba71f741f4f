/**
 * Server access log records in S3's format: one line per request, space-separated fields, a
 * field with no value written `-`, the time in brackets and the request line, referer and user
 * agent in double quotes. Pure: the delivery (delivery.ts) writes the lines into log objects.
 */

export interface AccessLogRecord {
  bucketOwner: string;
  bucket: string;
  timeMs: number;
  remoteIp: string;
  /** The requester's canonical id; undefined for an anonymous request. */
  requester?: string;
  requestId: string;
  /** `REST.GET.OBJECT`, `REST.PUT.ACL`, ... */
  operation: string;
  key?: string;
  /** `GET /bucket/key?query HTTP/1.1` */
  requestUri: string;
  httpStatus: number;
  errorCode?: string;
  bytesSent?: number;
  objectSize?: number;
  totalTimeMs: number;
  turnAroundTimeMs?: number;
  referer?: string;
  userAgent?: string;
  versionId?: string;
  hostId: string;
  /** `SigV4`, `SigV2`; undefined when unsigned. */
  signatureVersion?: string;
  cipherSuite?: string;
  /** `AuthHeader` or `QueryString`; undefined when unsigned. */
  authType?: string;
  hostHeader?: string;
  tlsVersion?: string;
  accessPointArn?: string;
  /** `Yes` when an ACL was needed to allow the request. */
  aclRequired?: boolean;
}

const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (value: number): string => String(value).padStart(2, '0');

/** `[06/Feb/2019:00:00:38 +0000]` */
export function logTime(timeMs: number): string {
  const date = new Date(timeMs);
  return `[${two(date.getUTCDate())}/${months[date.getUTCMonth()]}/${date.getUTCFullYear()}:${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())} +0000]`;
}

/** A bare field: `-` when absent; white space, quotes and brackets (which would split or merge fields) percent-encoded. */
function bare(value: string | number | undefined): string {
  if (value === undefined || value === '') return '-';
  return String(value).replace(/[\s"[\]]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/** A quoted field: `"-"` when absent; quotes and backslashes escaped, control characters dropped. */
function quoted(value: string | undefined): string {
  if (value === undefined || value === '') return '"-"';
  return `"${value.replace(/[\\"]/g, '\\$&').replace(/[\x00-\x1f\x7f]/g, '')}"`;
}

/** One record as a line (without the line feed). */
export function formatRecord(record: AccessLogRecord): string {
  return [
    bare(record.bucketOwner), bare(record.bucket), logTime(record.timeMs), bare(record.remoteIp), bare(record.requester), bare(record.requestId),
    bare(record.operation), bare(record.key === undefined ? undefined : encodeURIComponent(record.key).replace(/%2F/g, '/')), quoted(record.requestUri),
    bare(record.httpStatus), bare(record.errorCode), bare(record.bytesSent === 0 ? undefined : record.bytesSent), bare(record.objectSize), bare(record.totalTimeMs),
    bare(record.turnAroundTimeMs), quoted(record.referer), quoted(record.userAgent), bare(record.versionId), bare(record.hostId), bare(record.signatureVersion),
    bare(record.cipherSuite), bare(record.authType), bare(record.hostHeader), bare(record.tlsVersion), bare(record.accessPointArn), record.aclRequired ? 'Yes' : '-',
  ].join(' ');
}

/** Where a log object goes: the target's key format and prefix. */
export interface LogTarget {
  targetBucket: string;
  targetPrefix: string;
  keyFormat: { kind: 'simple' } | { kind: 'partitioned'; dateSource: 'EventTime' | 'DeliveryTime' };
}

/**
 * The key of one log object. Simple: `[prefix]YYYY-mm-DD-HH-MM-SS-<unique>`; partitioned:
 * `[prefix]<owner>/<region>/<source bucket>/YYYY/mm/DD/YYYY-mm-DD-HH-MM-SS-<unique>`. The unique
 * part names the node and the batch, so the same batch delivered twice is one object.
 */
export function logObjectKey(target: LogTarget, context: { owner: string; region: string; sourceBucket: string; eventTimeMs: number; deliveryTimeMs: number; unique: string }): string {
  const timeMs = target.keyFormat.kind === 'partitioned' && target.keyFormat.dateSource === 'DeliveryTime' ? context.deliveryTimeMs : context.eventTimeMs;
  const date = new Date(timeMs);
  const day = [date.getUTCFullYear(), two(date.getUTCMonth() + 1), two(date.getUTCDate())];
  const stamp = `${day.join('-')}-${two(date.getUTCHours())}-${two(date.getUTCMinutes())}-${two(date.getUTCSeconds())}-${context.unique}`;
  if (target.keyFormat.kind === 'simple') return `${target.targetPrefix}${stamp}`;
  return `${target.targetPrefix}${context.owner}/${context.region}/${context.sourceBucket}/${day.join('/')}/${stamp}`;
}
