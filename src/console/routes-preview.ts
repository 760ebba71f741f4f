/**
 * Previews on the object page: the bytes of a version shown in the page itself (an image, text,
 * audio, video, or a PDF in a frame) rather than downloaded. Served from the console's origin like downloads, so with
 * the same sandbox policy (console-plugin.ts: `userContent`), never sniffed, `inline`; only for the
 * media types a browser shows safely in an <img>, <audio>, <video> or as text (contracts/preview.ts),
 * up to its previewMaxBytes, and not for encrypted versions. Anything else is
 * `415 PreviewUnavailable` saying why, and the page offers the download instead.
 */
import type { FastifyInstance } from 'fastify';
import { Readable } from 'node:stream';
import { SvcError } from '../errors/index.js';
import type { ConsoleContext } from './context.js';
import { bucketParam, optionalVersionId, queryOf, requiredKey } from './input.js';
import { markFramable, requestAccess } from './request-state.js';
import { previewSchema } from './schemas-preview.js';
import { previewKind, previewMaxBytes } from '../contracts/preview.js';

export async function previewRoutes(app: FastifyInstance, options: { context: ConsoleContext }): Promise<void> {
  const { context } = options;
  const access = { actions: ['s3:GetObject'], on: 'object', conditional: { actions: ['s3:GetObjectVersion'], when: 'with versionId, instead of s3:GetObject' } } as const;
  app.get('/buckets/:bucket/preview', { schema: previewSchema, config: { userContent: true, access } }, async (request, reply) => {
    const bucket = bucketParam(request.params);
    const query = queryOf(request);
    const key = requiredKey(query.key);
    const versionId = optionalVersionId(query.versionId);
    await requestAccess(request).require([{ action: versionId === undefined ? 's3:GetObject' : 's3:GetObjectVersion', bucket, key }]);
    const objects = context.objects();
    const info = await objects.headObject(bucket, key, versionId);
    const kind = previewKind(info.contentType);
    if (!kind) throw new SvcError('PreviewUnavailable', `${info.contentType ?? 'an object without a content type'} is not previewed; download it instead`, { contentType: info.contentType ?? null });
    if (info.encryption) throw new SvcError('PreviewUnavailable', 'encrypted objects are not previewed; download it instead', { encryption: info.encryption.kind });
    if (info.sizeBytes > previewMaxBytes) throw new SvcError('PreviewUnavailable', `${info.sizeBytes} bytes is more than the ${previewMaxBytes} bytes previews show; download it instead`, { sizeBytes: info.sizeBytes, maxBytes: previewMaxBytes });
    const reader = await objects.getObject(bucket, key, { versionId: info.versionId });
    // A PDF is shown in a frame of the console's page: only the console's own origin may frame it.
    if (kind === 'pdf') markFramable(request);
    reply
      // Text of any kind is shown as plain text: never as a page of its own.
      .header('content-type', kind === 'text' ? 'text/plain; charset=utf-8' : (info.contentType ?? 'application/octet-stream'))
      .header('content-length', String(reader.info.sizeBytes))
      .header('etag', `"${reader.info.etag}"`)
      .header('content-disposition', 'inline')
      .header('cache-control', 'private, no-store');
    return reply.send(Readable.from(reader.body, { objectMode: false }));
  });
}
