/** CopyObject and multipart uploads beyond the commit rules of the core checks. */
import { createHash } from 'node:crypto';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { errorOf, expectThat, type Check, type Target } from '../../runner/check.js';
import { bodyOf, bucketWith, encodeKey, expectAbsent, expectError, md5Hex, patterned, put, textOf } from './support.js';

const mebibyte = 1024 * 1024;

async function upload(target: Target, bucket: string, key: string, extra: Record<string, unknown> = {}): Promise<string> {
  return (await target.s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ...extra }))).UploadId!;
}

async function part(target: Target, bucket: string, key: string, uploadId: string, partNumber: number, body: Buffer | string): Promise<string> {
  return (await target.s3.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: partNumber, Body: body }))).ETag!;
}

async function complete(target: Target, bucket: string, key: string, uploadId: string, parts: [number, string][]) {
  return target.s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts.map(([PartNumber, ETag]) => ({ PartNumber, ETag })) } }));
}

const multipartEtag = (parts: Buffer[]) => `"${createHash('md5').update(Buffer.concat(parts.map((body) => createHash('md5').update(body).digest()))).digest('hex')}-${parts.length}"`;

const copyChecks: Check[] = [
  {
    id: 's3.copy.same-bucket',
    spec: 'S3 CopyObject',
    title: 'a copy reads back byte for byte with the source ETag, and the source is unchanged',
    async run(target) {
      const body = patterned(70_000, 3);
      const bucket = await bucketWith(target, 'copy', 'source', body);
      const copied = await target.s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy', CopySource: `${bucket}/source` }));
      expectThat(copied.CopyObjectResult?.ETag === `"${md5Hex(body)}"`, `the copy's ETag is ${copied.CopyObjectResult?.ETag}`);
      expectThat((await bodyOf(target, bucket, 'copy')).equals(body) && (await bodyOf(target, bucket, 'source')).equals(body), 'the copy or the source differs from the original body');
    },
  },
  {
    id: 's3.copy.across-buckets',
    spec: 'S3 CopyObject',
    title: 'a copy into another bucket reads back identical',
    async run(target) {
      const from = await bucketWith(target, 'copyfrom', 'source', 'across');
      const to = await target.makeBucket('copyto');
      await target.s3.send(new CopyObjectCommand({ Bucket: to, Key: 'copied', CopySource: `${from}/source` }));
      expectThat((await textOf(target, to, 'copied')) === 'across', 'the copy in the other bucket differs');
    },
  },
  {
    id: 's3.copy.metadata-copy',
    spec: 'S3 CopyObject',
    title: 'with the COPY directive the copy keeps the source metadata and Content-Type',
    async run(target) {
      const bucket = await target.makeBucket('copymeta');
      await put(target, bucket, 'source', 'x', { Metadata: { origin: 'source' }, ContentType: 'text/x-source' });
      await target.s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy', CopySource: `${bucket}/source`, MetadataDirective: 'COPY', Metadata: { ignored: 'yes' } }));
      const head = await target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'copy' }));
      expectThat(head.Metadata?.origin === 'source' && head.Metadata?.ignored === undefined && head.ContentType === 'text/x-source', `the copy has metadata ${JSON.stringify(head.Metadata)} and type ${head.ContentType}`);
    },
  },
  {
    id: 's3.copy.metadata-replace',
    spec: 'S3 CopyObject',
    title: 'with the REPLACE directive the copy gets the request metadata instead',
    async run(target) {
      const bucket = await target.makeBucket('copyreplace');
      await put(target, bucket, 'source', 'x', { Metadata: { origin: 'source' } });
      await target.s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy', CopySource: `${bucket}/source`, MetadataDirective: 'REPLACE', Metadata: { fresh: 'yes' }, ContentType: 'text/x-fresh' }));
      const head = await target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'copy' }));
      expectThat(head.Metadata?.fresh === 'yes' && head.Metadata?.origin === undefined && head.ContentType === 'text/x-fresh', `the copy has metadata ${JSON.stringify(head.Metadata)} and type ${head.ContentType}`);
    },
  },
  {
    id: 's3.copy.to-self-needs-change',
    spec: 'S3 CopyObject',
    title: 'copying an object onto itself without changing anything is refused with InvalidRequest',
    async run(target) {
      const bucket = await bucketWith(target, 'copyself', 'self', 'self');
      await expectError(target.s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'self', CopySource: `${bucket}/self` })), 'InvalidRequest', 'a copy onto itself', 400);
      expectThat((await textOf(target, bucket, 'self')) === 'self', 'the object changed');
    },
  },
  {
    id: 's3.copy.to-self-storage-class',
    spec: 'Storage classes',
    title: 'copying an object onto itself with another storage class changes the class and keeps the body',
    async run(target) {
      const bucket = await bucketWith(target, 'copyclass', 'doc', 'reclassified');
      await target.s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'doc', CopySource: `${bucket}/doc`, StorageClass: 'REDUCED_REDUNDANCY' }));
      const head = await target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'doc' }));
      expectThat(head.StorageClass === 'REDUCED_REDUNDANCY', `after the copy the class is ${head.StorageClass}`);
      expectThat((await textOf(target, bucket, 'doc')) === 'reclassified', 'the body changed');
    },
  },
  {
    id: 's3.copy.missing-bucket',
    spec: 'S3 CopyObject',
    title: 'a copy from a bucket that does not exist answers NoSuchBucket',
    async run(target) {
      const bucket = await target.makeBucket('copynobucket');
      await expectError(target.s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'to', CopySource: `${target.bucketName('never-made')}/k` })), 'NoSuchBucket', 'a copy from a missing bucket', 404);
      await expectAbsent(target, bucket, 'to', 'a failed copy');
    },
  },
  {
    id: 's3.copy.encoded-source',
    spec: 'S3 CopyObject',
    title: 'a copy source with spaces and non-ASCII characters, URL-encoded, is found',
    async run(target) {
      const bucket = await bucketWith(target, 'copyenc', 'dir/ä b+c', 'encoded');
      await target.s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copied', CopySource: `${bucket}/${encodeKey('dir/ä b+c')}` }));
      expectThat((await textOf(target, bucket, 'copied')) === 'encoded', 'the copy of an encoded source differs');
    },
  },
  {
    id: 's3.copy.storage-class-rrs',
    spec: 'Storage classes',
    title: 'a multipart upload created as REDUCED_REDUNDANCY completes into an object of that class',
    needs: ['multipart'],
    async run(target) {
      const bucket = await target.makeBucket('mprrs');
      const id = await upload(target, bucket, 'rrs', { StorageClass: 'REDUCED_REDUNDANCY' });
      await complete(target, bucket, 'rrs', id, [[1, await part(target, bucket, 'rrs', id, 1, 'reduced')]]);
      const head = await target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'rrs' }));
      expectThat(head.StorageClass === 'REDUCED_REDUNDANCY', `the completed object reports class ${head.StorageClass}`);
    },
  },
];

const multipartChecks: Check[] = [
  {
    id: 's3.multipart.list-parts',
    spec: 'S3 ListParts',
    title: 'ListParts shows every uploaded part with its number, size and ETag',
    async run(target) {
      const bucket = await target.makeBucket('listparts');
      const id = await upload(target, bucket, 'parts');
      const etags = [await part(target, bucket, 'parts', id, 1, 'one'), await part(target, bucket, 'parts', id, 3, 'three!')];
      const listed = await target.s3.send(new ListPartsCommand({ Bucket: bucket, Key: 'parts', UploadId: id }));
      const seen = (listed.Parts ?? []).map((entry) => [entry.PartNumber, entry.Size, entry.ETag]);
      expectThat(JSON.stringify(seen) === JSON.stringify([[1, 3, etags[0]], [3, 6, etags[1]]]), `ListParts shows ${JSON.stringify(seen)}`);
    },
  },
  {
    id: 's3.multipart.list-uploads',
    spec: 'S3 ListMultipartUploads',
    title: 'an open upload is listed with its key and id; once aborted it is not',
    async run(target) {
      const bucket = await target.makeBucket('listuploads');
      const id = await upload(target, bucket, 'open');
      const listed = (await target.s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [];
      expectThat(listed.some((entry) => entry.Key === 'open' && entry.UploadId === id), `ListMultipartUploads shows ${JSON.stringify(listed.map((entry) => entry.Key))}`);
      await target.s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: 'open', UploadId: id }));
      const after = (await target.s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [];
      expectThat(!after.some((entry) => entry.UploadId === id), 'an aborted upload is still listed');
    },
  },
  {
    id: 's3.multipart.abort',
    spec: 'S3 AbortMultipartUpload',
    title: 'after an abort, uploading a part or completing answers NoSuchUpload and no object appears',
    async run(target) {
      const bucket = await target.makeBucket('abort');
      const id = await upload(target, bucket, 'aborted');
      const etag = await part(target, bucket, 'aborted', id, 1, 'x');
      await target.s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: 'aborted', UploadId: id }));
      await expectError(target.s3.send(new UploadPartCommand({ Bucket: bucket, Key: 'aborted', UploadId: id, PartNumber: 2, Body: 'y' })), 'NoSuchUpload', 'UploadPart after abort', 404);
      await expectError(complete(target, bucket, 'aborted', id, [[1, etag]]), 'NoSuchUpload', 'Complete after abort', 404);
      await expectAbsent(target, bucket, 'aborted', 'an aborted upload');
    },
  },
  {
    id: 's3.multipart.unknown-upload',
    spec: 'S3 CompleteMultipartUpload',
    title: 'completing an upload id that was never issued answers NoSuchUpload',
    async run(target) {
      const bucket = await target.makeBucket('unknownupload');
      await expectError(complete(target, bucket, 'k', 'no-such-upload-id', [[1, '"00000000000000000000000000000000"']]), 'NoSuchUpload', 'Complete of an unknown upload', 404);
    },
  },
  {
    id: 's3.multipart.part-order',
    spec: 'S3 CompleteMultipartUpload',
    title: 'a part list not in ascending order is refused with InvalidPartOrder',
    async run(target) {
      const bucket = await target.makeBucket('partorder');
      const id = await upload(target, bucket, 'order');
      const first = await part(target, bucket, 'order', id, 1, patterned(5 * mebibyte));
      const second = await part(target, bucket, 'order', id, 2, 'tail');
      await expectError(complete(target, bucket, 'order', id, [[2, second], [1, first]]), 'InvalidPartOrder', 'Complete with parts 2,1', 400);
      await expectAbsent(target, bucket, 'order', 'a refused Complete');
    },
  },
  {
    id: 's3.multipart.part-number-range',
    spec: 'S3 UploadPart',
    title: 'part numbers 0 and 10001 are refused with InvalidArgument',
    async run(target) {
      const bucket = await target.makeBucket('partnumber');
      const id = await upload(target, bucket, 'numbers');
      for (const number of [0, 10001]) {
        const answer = await target.raw({ method: 'PUT', path: `/${bucket}/numbers`, query: { partNumber: String(number), uploadId: id }, body: 'x' });
        expectThat(answer.status === 400 && answer.code === 'InvalidArgument', `part number ${number} answered ${answer.status} ${answer.code}`);
      }
    },
  },
  {
    id: 's3.multipart.part-replaced',
    spec: 'S3 UploadPart',
    title: 'uploading a part number again replaces the part: the object has the second body',
    async run(target) {
      const bucket = await target.makeBucket('partreplace');
      const id = await upload(target, bucket, 'replaced');
      await part(target, bucket, 'replaced', id, 1, 'first body');
      const etag = await part(target, bucket, 'replaced', id, 1, 'second body');
      await complete(target, bucket, 'replaced', id, [[1, etag]]);
      expectThat((await textOf(target, bucket, 'replaced')) === 'second body', 'the completed object is not the re-uploaded part');
    },
  },
  {
    id: 's3.multipart.subset-of-parts',
    spec: 'S3 CompleteMultipartUpload',
    title: 'completing with a subset of the uploaded parts makes an object of just those parts, ETag with -N',
    async run(target) {
      const bucket = await target.makeBucket('subset');
      const id = await upload(target, bucket, 'subset');
      const bodies = [patterned(5 * mebibyte, 1), patterned(5 * mebibyte, 2), Buffer.from('last part')];
      const etags = [];
      for (const [index, body] of bodies.entries()) etags.push(await part(target, bucket, 'subset', id, index + 1, body));
      const done = await complete(target, bucket, 'subset', id, [[1, etags[0]!], [3, etags[2]!]]);
      const chosen = [bodies[0]!, bodies[2]!];
      expectThat(done.ETag === multipartEtag(chosen), `the ETag is ${done.ETag}, expected ${multipartEtag(chosen)}`);
      expectThat(md5Hex(await bodyOf(target, bucket, 'subset')) === md5Hex(Buffer.concat(chosen)), 'the object is not parts 1 and 3');
    },
  },
  {
    id: 's3.multipart.metadata',
    spec: 'S3 CreateMultipartUpload',
    title: 'metadata and Content-Type given at creation are on the completed object',
    async run(target) {
      const bucket = await target.makeBucket('mpmeta');
      const id = await upload(target, bucket, 'meta', { Metadata: { stage: 'create' }, ContentType: 'text/x-parts' });
      await complete(target, bucket, 'meta', id, [[1, await part(target, bucket, 'meta', id, 1, 'x')]]);
      const head = await target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'meta' }));
      expectThat(head.Metadata?.stage === 'create' && head.ContentType === 'text/x-parts', `the object has metadata ${JSON.stringify(head.Metadata)} and type ${head.ContentType}`);
    },
  },
  {
    id: 's3.multipart.overwrites',
    spec: 'S3 CompleteMultipartUpload',
    title: 'a completed upload replaces an existing object, and is no longer listed as open',
    async run(target) {
      const bucket = await bucketWith(target, 'mpoverwrite', 'doc', 'old body');
      const id = await upload(target, bucket, 'doc');
      await complete(target, bucket, 'doc', id, [[1, await part(target, bucket, 'doc', id, 1, 'new body')]]);
      expectThat((await textOf(target, bucket, 'doc')) === 'new body', 'the completed upload did not replace the object');
      const open = (await target.s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [];
      expectThat(open.length === 0, 'a completed upload is still listed as open');
    },
  },
  {
    id: 's3.multipart.range-across-parts',
    spec: 'S3 GetObject (Range)',
    title: 'a range spanning the boundary between two parts reads the right bytes',
    async run(target) {
      const bucket = await target.makeBucket('mprange');
      const id = await upload(target, bucket, 'joined');
      const bodies = [patterned(5 * mebibyte, 7), patterned(1000, 9)];
      await complete(target, bucket, 'joined', id, [[1, await part(target, bucket, 'joined', id, 1, bodies[0]!)], [2, await part(target, bucket, 'joined', id, 2, bodies[1]!)]]);
      const start = 5 * mebibyte - 100;
      const answer = await target.raw({ method: 'GET', path: `/${bucket}/joined`, headers: { range: `bytes=${start}-${start + 299}` } });
      expectThat(answer.status === 206 && answer.body.equals(Buffer.concat(bodies).subarray(start, start + 300)), `the range across parts answered ${answer.status} with other bytes`);
    },
  },
  {
    id: 's3.multipart.upload-part-copy',
    spec: 'S3 UploadPartCopy',
    title: 'UploadPartCopy with a source range makes a part of exactly those bytes',
    async run(target) {
      const source = patterned(10_000, 5);
      const bucket = await bucketWith(target, 'partcopy', 'source', source);
      const id = await upload(target, bucket, 'assembled');
      const copied = await target.s3.send(new UploadPartCopyCommand({ Bucket: bucket, Key: 'assembled', UploadId: id, PartNumber: 1, CopySource: `${bucket}/source`, CopySourceRange: 'bytes=100-1099' }));
      await complete(target, bucket, 'assembled', id, [[1, copied.CopyPartResult!.ETag!]]);
      expectThat((await bodyOf(target, bucket, 'assembled')).equals(source.subarray(100, 1100)), 'the part copied from a range has other bytes');
    },
  },
  {
    id: 's3.multipart.empty-part-list',
    spec: 'S3 CompleteMultipartUpload',
    title: 'completing with no parts is refused with a 400 and no object appears',
    async run(target) {
      const bucket = await target.makeBucket('noparts');
      const id = await upload(target, bucket, 'none');
      await part(target, bucket, 'none', id, 1, 'x');
      const answer = await target.raw({ method: 'POST', path: `/${bucket}/none`, query: { uploadId: id }, body: '<CompleteMultipartUpload></CompleteMultipartUpload>' });
      expectThat(answer.status === 400 && ['MalformedXML', 'InvalidRequest', 'InvalidPart'].includes(answer.code), `Complete without parts answered ${answer.status} ${answer.code}`);
      await expectAbsent(target, bucket, 'none', 'a Complete without parts');
    },
  },
  {
    id: 's3.multipart.wrong-etag',
    spec: 'S3 CompleteMultipartUpload',
    title: 'a part named with another ETag is refused with InvalidPart and the upload stays open',
    async run(target) {
      const bucket = await target.makeBucket('wrongetag');
      const id = await upload(target, bucket, 'k');
      await part(target, bucket, 'k', id, 1, 'real');
      await expectError(complete(target, bucket, 'k', id, [[1, `"${md5Hex('other')}"`]]), 'InvalidPart', 'Complete with a wrong part ETag', 400);
      const listed = await errorOf(target.s3.send(new ListPartsCommand({ Bucket: bucket, Key: 'k', UploadId: id })));
      expectThat(listed.name === 'no error', `after a refused Complete, ListParts answered ${listed.name}`);
    },
  },
];

export const copyMultipartChecks: Check[] = [...copyChecks, ...multipartChecks.map((check) => ({ ...check, needs: ['multipart' as const] }))];
