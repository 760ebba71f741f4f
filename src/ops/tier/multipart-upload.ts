/**
 * A version too large for one PUT goes to its tier as a multipart upload: streamed part by part
 * from the version's stored bytes (never held whole), each part's size drawn from the version's
 * size so that no upload needs more than `limits.tierMultipartTargetParts` parts, and never below
 * S3's minimum part size. A failed upload is aborted on the tier (its parts freed) before the
 * error goes to the caller, who tries the transition again later.
 */
import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { s3Sdk } from '../s3-sdk.js';
import { SvcError } from '../../errors/index.js';
import { ByteSlices } from '../../util/byte-slices.js';
import { limits, MiB } from '../../util/limits.js';

/** The part size of a tier upload of `sizeBytes`: whole MiB, at least S3's minimum part size. */
export function tierPartSizeBytes(sizeBytes: number): number {
  return Math.max(limits.minPartSizeBytes, Math.ceil(sizeBytes / limits.tierMultipartTargetParts / MiB) * MiB);
}

/** Uploads `sizeBytes` bytes of `body` as `key` in parts; `request` names the tier's failures. */
export async function uploadInParts(
  client: S3Client,
  target: { bucket: string; key: string },
  body: AsyncIterable<Uint8Array>,
  sizeBytes: number,
  request: <T>(send: () => Promise<T>) => Promise<T>,
): Promise<{ remoteVersionId?: string }> {
  const { AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, UploadPartCommand } = await s3Sdk();
  const { bucket, key } = target;
  const partSizeBytes = tierPartSizeBytes(sizeBytes);
  const created = await request(() => client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key })));
  const uploadId = created.UploadId;
  if (!uploadId) throw new SvcError('TierUnreachable', 'the tier started a multipart upload without an upload id');
  const slices = new ByteSlices(body);
  try {
    const parts: { PartNumber: number; ETag: string }[] = [];
    for (let offset = 0, number = 1; offset < sizeBytes; offset += partSizeBytes, number += 1) {
      const lengthBytes = Math.min(partSizeBytes, sizeBytes - offset);
      const answer = await request(() => client.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: number, Body: Readable.from(slices.next(lengthBytes)), ContentLength: lengthBytes })));
      parts.push({ PartNumber: number, ETag: answer.ETag ?? '' });
    }
    const done = await request(() => client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } })));
    return done.VersionId ? { remoteVersionId: done.VersionId } : {};
  } catch (error) {
    await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId })).catch(() => undefined);
    throw error;
  } finally {
    await slices.close();
  }
}
