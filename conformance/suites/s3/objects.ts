/** Object operations: PUT, GET, HEAD, DELETE, metadata, Content-MD5, DeleteObjects. */
import { createHash } from 'node:crypto';
import { DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, type PutObjectCommandInput } from '@aws-sdk/client-s3';
import { errorOf, expectThat, type Check } from '../../runner/check.js';
import { bucketWith, expectAbsent, expectError, expectRawError, md5Hex, put, textOf } from './support.js';

/** System metadata a PUT sets and GET and HEAD must give back as sent. */
const systemHeaders: [keyof PutObjectCommandInput, string, string][] = [
  ['ContentType', 'content-type', 'text/x-conformance; charset=utf-8'],
  ['CacheControl', 'cache-control', 'max-age=3600, must-revalidate'],
  ['ContentDisposition', 'content-disposition', 'attachment; filename="report.txt"'],
  ['ContentEncoding', 'content-encoding', 'identity'],
  ['ContentLanguage', 'content-language', 'de-CH'],
];

const systemHeaderChecks: Check[] = systemHeaders.map(([field, header, value]) => ({
  id: `s3.object.metadata.${header}`,
  spec: 'S3 PutObject',
  title: `${header} set on PUT comes back unchanged on GET and HEAD`,
  async run(target) {
    const bucket = await target.makeBucket(`meta-${header}`);
    await put(target, bucket, 'doc', 'body', { [field]: value });
    for (const method of ['GET', 'HEAD']) {
      const answer = await target.raw({ method, path: `/${bucket}/doc` });
      expectThat(answer.headers[header] === value, `${method} answered ${header}: ${answer.headers[header]}, PUT set ${value}`);
    }
  },
}));

export const objectChecks: Check[] = [
  {
    id: 's3.object.etag-is-md5',
    spec: 'S3 PutObject',
    title: 'the ETag of a single PUT is the quoted MD5 of the body, on PUT, GET and HEAD',
    async run(target) {
      const bucket = await target.makeBucket('etag');
      const body = 'the quick brown fox';
      const expected = `"${md5Hex(body)}"`;
      const written = await put(target, bucket, 'fox', body);
      const head = await target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'fox' }));
      const get = await target.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'fox' }));
      await get.Body!.transformToByteArray();
      expectThat(written.ETag === expected && head.ETag === expected && get.ETag === expected, `ETags ${written.ETag} / ${head.ETag} / ${get.ETag}, expected ${expected}`);
    },
  },
  {
    id: 's3.object.head-length',
    spec: 'S3 HeadObject',
    title: 'HEAD reports the stored length and a Last-Modified close to now, without a body',
    async run(target) {
      const bucket = await bucketWith(target, 'head', 'sized', 'x'.repeat(12345));
      const answer = await target.raw({ method: 'HEAD', path: `/${bucket}/sized` });
      expectThat(answer.status === 200 && answer.headers['content-length'] === '12345', `HEAD answered ${answer.status} with Content-Length ${answer.headers['content-length']}`);
      expectThat(answer.body.length === 0, 'HEAD answered with a body');
      const modified = Date.parse(answer.headers['last-modified'] ?? '');
      expectThat(Math.abs(modified - Date.now()) < 15 * 60_000, `Last-Modified ${answer.headers['last-modified']} is not about now`);
    },
  },
  {
    id: 's3.object.empty',
    spec: 'S3 PutObject',
    title: 'a zero-byte object is stored, reads back empty and has the MD5 of nothing as ETag',
    async run(target) {
      const bucket = await target.makeBucket('empty');
      const written = await put(target, bucket, 'nothing', '');
      expectThat(written.ETag === '"d41d8cd98f00b204e9800998ecf8427e"', `the ETag of an empty object is ${written.ETag}`);
      expectThat((await textOf(target, bucket, 'nothing')) === '', 'an empty object reads back non-empty');
    },
  },
  {
    id: 's3.object.user-metadata',
    spec: 'S3 PutObject',
    title: 'x-amz-meta-* headers are stored, with names in lower case, and come back on HEAD',
    async run(target) {
      const bucket = await target.makeBucket('usermeta');
      await put(target, bucket, 'doc', 'x', { Metadata: { Colour: 'blue', 'project-id': '42' } });
      const head = await target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'doc' }));
      expectThat(head.Metadata?.colour === 'blue' && head.Metadata?.['project-id'] === '42', `HEAD metadata is ${JSON.stringify(head.Metadata)}`);
    },
  },
  {
    id: 's3.object.overwrite-metadata',
    spec: 'S3 PutObject',
    title: 'an overwrite replaces the metadata as well as the body',
    async run(target) {
      const bucket = await target.makeBucket('overmeta');
      await put(target, bucket, 'doc', 'first', { Metadata: { old: '1' } });
      await put(target, bucket, 'doc', 'second', { Metadata: { new: '2' } });
      const head = await target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'doc' }));
      expectThat(head.Metadata?.new === '2' && head.Metadata?.old === undefined, `after an overwrite HEAD metadata is ${JSON.stringify(head.Metadata)}`);
      expectThat((await textOf(target, bucket, 'doc')) === 'second', 'the overwrite is not what GET returns');
    },
  },
  ...systemHeaderChecks,
  {
    id: 's3.object.get-missing',
    spec: 'S3 GetObject',
    title: 'GET of a missing key answers 404 NoSuchKey with an XML error body naming the key',
    async run(target) {
      const bucket = await target.makeBucket('nokey');
      const answer = await target.raw({ method: 'GET', path: `/${bucket}/absent-key` });
      expectRawError(answer, 404, 'NoSuchKey', 'GET of a missing key');
      expectThat(answer.text.includes('absent-key') || answer.xml.Error?.Key === 'absent-key', 'the error body does not name the key');
    },
  },
  {
    id: 's3.object.head-missing',
    spec: 'S3 HeadObject',
    title: 'HEAD of a missing key answers 404 with no body',
    async run(target) {
      const bucket = await target.makeBucket('nohead');
      const answer = await target.raw({ method: 'HEAD', path: `/${bucket}/absent` });
      expectThat(answer.status === 404 && answer.body.length === 0, `HEAD of a missing key answered ${answer.status} with ${answer.body.length} body bytes`);
    },
  },
  {
    id: 's3.object.delete',
    spec: 'S3 DeleteObject',
    title: 'DELETE answers 204 and the object is gone; deleting it again still answers 204',
    async run(target) {
      const bucket = await bucketWith(target, 'delete', 'doomed', 'x');
      for (const round of ['first', 'second']) {
        const answer = await target.raw({ method: 'DELETE', path: `/${bucket}/doomed` });
        expectThat(answer.status === 204, `the ${round} DELETE answered ${answer.status}`);
      }
      await expectAbsent(target, bucket, 'doomed', 'DELETE');
    },
  },
  {
    id: 's3.object.delete-leaves-neighbours',
    spec: 'S3 DeleteObject',
    title: 'deleting a key leaves keys that share its prefix alone',
    async run(target) {
      const bucket = await target.makeBucket('neighbours');
      for (const key of ['dir/a', 'dir/ab', 'dir', 'dir/a/b']) await put(target, bucket, key, key);
      await target.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'dir/a' }));
      for (const key of ['dir/ab', 'dir', 'dir/a/b']) expectThat((await textOf(target, bucket, key)) === key, `${key} changed when dir/a was deleted`);
      await expectAbsent(target, bucket, 'dir/a', 'DELETE');
    },
  },
  {
    id: 's3.object.content-md5.good',
    spec: 'S3 PutObject',
    title: 'a PUT with a correct Content-MD5 is stored',
    async run(target) {
      const bucket = await target.makeBucket('md5ok');
      const answer = await target.raw({ method: 'PUT', path: `/${bucket}/ok`, body: 'verified', headers: { 'content-md5': createHash('md5').update('verified').digest('base64') } });
      expectThat(answer.status === 200, `a PUT with the right Content-MD5 answered ${answer.status} ${answer.code}`);
      expectThat((await textOf(target, bucket, 'ok')) === 'verified', 'the body read back differs');
    },
  },
  {
    id: 's3.object.content-md5.mismatch',
    spec: 'S3 PutObject',
    title: 'a PUT whose Content-MD5 does not match the body is refused with BadDigest and stores nothing',
    async run(target) {
      const bucket = await target.makeBucket('md5bad');
      const answer = await target.raw({ method: 'PUT', path: `/${bucket}/bad`, body: 'verified', headers: { 'content-md5': createHash('md5').update('other').digest('base64') } });
      expectRawError(answer, 400, 'BadDigest', 'a PUT with a wrong Content-MD5');
      await expectAbsent(target, bucket, 'bad', 'a PUT with a wrong Content-MD5');
    },
  },
  {
    id: 's3.object.content-md5.malformed',
    spec: 'S3 PutObject',
    title: 'a PUT whose Content-MD5 is not a base64 MD5 is refused with InvalidDigest and stores nothing',
    async run(target) {
      const bucket = await target.makeBucket('md5junk');
      const answer = await target.raw({ method: 'PUT', path: `/${bucket}/junk`, body: 'verified', headers: { 'content-md5': 'not-an-md5' } });
      expectRawError(answer, 400, 'InvalidDigest', 'a PUT with a malformed Content-MD5');
      await expectAbsent(target, bucket, 'junk', 'a PUT with a malformed Content-MD5');
    },
  },
  {
    id: 's3.delete-objects.batch',
    spec: 'S3 DeleteObjects',
    title: 'DeleteObjects removes every named key, reports each as deleted (missing ones too) and leaves the rest',
    async run(target) {
      const bucket = await target.makeBucket('batch');
      for (const key of ['a', 'b', 'c', 'keep']) await put(target, bucket, key, key);
      const answer = await target.s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: ['a', 'b', 'c', 'never-there'].map((Key) => ({ Key })) } }));
      const deleted = (answer.Deleted ?? []).map((entry) => entry.Key).sort();
      expectThat(JSON.stringify(deleted) === JSON.stringify(['a', 'b', 'c', 'never-there']), `DeleteObjects reported ${JSON.stringify(deleted)} deleted`);
      expectThat((answer.Errors ?? []).length === 0, `DeleteObjects reported errors ${JSON.stringify(answer.Errors)}`);
      for (const key of ['a', 'b', 'c']) await expectAbsent(target, bucket, key, 'DeleteObjects');
      expectThat((await textOf(target, bucket, 'keep')) === 'keep', 'a key not named was touched');
    },
  },
  {
    id: 's3.delete-objects.quiet',
    spec: 'S3 DeleteObjects',
    title: 'DeleteObjects in quiet mode deletes and reports nothing for keys that succeeded',
    async run(target) {
      const bucket = await bucketWith(target, 'quiet', 'q', 'x');
      const answer = await target.s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Quiet: true, Objects: [{ Key: 'q' }] } }));
      expectThat((answer.Deleted ?? []).length === 0, `quiet DeleteObjects reported ${JSON.stringify(answer.Deleted)}`);
      await expectAbsent(target, bucket, 'q', 'quiet DeleteObjects');
    },
  },
  {
    id: 's3.delete-objects.malformed',
    spec: 'S3 DeleteObjects',
    title: 'a DeleteObjects body that is not well-formed XML is refused with MalformedXML and deletes nothing',
    async run(target) {
      const bucket = await bucketWith(target, 'malformed', 'stay', 'stay');
      const body = '<Delete><Object><Key>stay</Key></Object>';
      const answer = await target.raw({ method: 'POST', path: `/${bucket}`, query: { delete: '' }, body, headers: { 'content-md5': createHash('md5').update(body).digest('base64') } });
      expectRawError(answer, 400, 'MalformedXML', 'DeleteObjects with broken XML');
      expectThat((await textOf(target, bucket, 'stay')) === 'stay', 'a refused DeleteObjects deleted the key');
    },
  },
  {
    id: 's3.object.key-too-long',
    spec: 'S3 PutObject',
    title: 'a key longer than 1024 bytes is refused with KeyTooLongError',
    async run(target) {
      const bucket = await target.makeBucket('longkey');
      const key = 'k'.repeat(200).concat('/').repeat(6);
      await expectError(target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'x' })), 'KeyTooLongError', 'a PUT of a 1206-byte key', 400);
    },
  },
  {
    id: 's3.object.unicode-key',
    spec: 'S3 PutObject',
    title: 'keys with spaces, plus signs, percent signs and non-ASCII characters round-trip exactly',
    async run(target) {
      const bucket = await target.makeBucket('unicode');
      const keys = ['with space', 'plus+sign', 'per%25cent', 'ümlaut/日本語', 'emoji-🙂', 'q?uestion', 'hash#tag', 'amp&er'];
      for (const key of keys) await put(target, bucket, key, key);
      for (const key of keys) expectThat((await textOf(target, bucket, key)) === key, `${JSON.stringify(key)} did not read back its own body`);
      const { ListObjectsV2Command } = await import('@aws-sdk/client-s3');
      const listed = ((await target.s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((object) => object.Key);
      expectThat(keys.every((key) => listed.includes(key)), `listing shows ${JSON.stringify(listed)}`);
    },
  },
  {
    id: 's3.object.method-not-allowed',
    spec: 'S3 error responses',
    title: 'a POST to an object without a multipart query is refused (405 MethodNotAllowed, or 400/501) and changes nothing',
    async run(target) {
      const bucket = await bucketWith(target, 'method', 'doc', 'x');
      const answer = await target.raw({ method: 'POST', path: `/${bucket}/doc`, body: 'x' });
      expectThat([400, 405, 501].includes(answer.status) && answer.code !== '', `POST to an object answered ${answer.status} ${answer.code}`);
      expectThat((await textOf(target, bucket, 'doc')) === 'x', 'the object changed');
    },
  },
  {
    id: 's3.error.body-shape',
    spec: 'S3 error responses',
    title: 'an error answer is XML <Error> with Code, Message, Resource and RequestId, and an x-amz-request-id header',
    async run(target) {
      const answer = await target.raw({ method: 'GET', path: `/${target.bucketName('never-made')}/k` });
      expectRawError(answer, 404, 'NoSuchBucket', 'GET in a missing bucket');
      for (const field of ['Message', 'RequestId']) expectThat(typeof answer.xml.Error?.[field] === 'string' && answer.xml.Error[field].length > 0, `the error body lacks ${field}`);
      expectThat(typeof answer.headers['x-amz-request-id'] === 'string', 'no x-amz-request-id header');
      expectThat((answer.headers['content-type'] ?? '').includes('xml'), `error Content-Type is ${answer.headers['content-type']}`);
    },
  },
  {
    id: 's3.error.no-such-bucket-on-get',
    spec: 'S3 error responses',
    title: 'GET of an object in a missing bucket answers NoSuchBucket, not NoSuchKey',
    async run(target) {
      await expectError(target.s3.send(new GetObjectCommand({ Bucket: target.bucketName('never-made'), Key: 'k' })), 'NoSuchBucket', 'GET in a missing bucket', 404);
    },
  },
];
