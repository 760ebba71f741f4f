/**
 * Signature Version 2 (`SVC_API_SIGNATURE_V2`, on by default): s3cmd with `--signature-v2` and
 * its `signurl`, boto3 with the `s3` (HMAC-SHA1) signer including a presigned GET and a presigned
 * POST form; the string to sign of AWS's documented example; and every refusal with AWS's status
 * and code (malformed header, wrong signature, unknown key, missing, invalid and skewed dates, an
 * expired URL), none of which stores anything. With the setting off, V2 is refused by name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { signV2, stringToSign } from '../src/api/s3/auth/sigv2.js';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { missingPythonModule, missingTool } from './helpers/external-tools.js';

const missing = { s3cmd: missingTool('s3cmd'), boto3: missingPythonModule('boto3', 'python3-boto3') };
for (const [tool, reason] of Object.entries(missing)) if (reason) console.warn(`skipping ${tool} tests: ${reason}`);

let root: string;
let server: SvcProcess;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-sigv2-'));
  server = await startSvc({ args: [join(root, 'drives/d{1...4}')] });
  await s3ClientFor(server.url).send(new CreateBucketCommand({ Bucket: 'sigv2' }));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

function run(command: string, args: string[], input?: string): string {
  const { AWS_CA_BUNDLE: _bundle, ...env } = process.env;
  try {
    return execFileSync(command, args, { env, encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (error) {
    const failed = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${command} failed: ${failed.message}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}\n${server.logs().slice(-2000)}`);
  }
}

/** Sends a request signed by hand with V2 (or with the given Authorization), and returns status, error code and body. */
async function sendV2(method: string, path: string, options: { headers?: Record<string, string>; body?: string; secret?: string; accessKey?: string; authorization?: string; url?: string } = {}): Promise<{ status: number; code?: string; body: string }> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  else {
    const lower = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
    const toSign = stringToSign({ method, rawPath: path.split('?')[0]!, rawQuery: path.split('?')[1] ?? '', headers: lower }, lower['x-amz-date'] === undefined ? (lower.date ?? '') : '', {});
    headers.authorization = `AWS ${options.accessKey ?? testCredentials.accessKeyId}:${signV2(options.secret ?? testCredentials.secretAccessKey, toSign)}`;
  }
  const answer = await fetch(`${options.url ?? server.url}${path}`, { method, headers, ...(options.body === undefined ? {} : { body: options.body }) });
  const body = await answer.text();
  return { status: answer.status, code: /<Code>([^<]+)<\/Code>/.exec(body)?.[1], body };
}

const now = (): string => new Date().toUTCString();

async function exists(key: string): Promise<boolean> {
  return s3ClientFor(server.url).send(new HeadObjectCommand({ Bucket: 'sigv2', Key: key })).then(() => true, () => false);
}

describe('the string to sign', () => {
  it("gives the signature of AWS's documented GET example", () => {
    const toSign = stringToSign({ method: 'GET', rawPath: '/johnsmith/photos/puppy.jpg', rawQuery: '', headers: { date: 'Tue, 27 Mar 2007 19:36:42 +0000' } }, 'Tue, 27 Mar 2007 19:36:42 +0000', {});
    expect(toSign).toBe('GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/johnsmith/photos/puppy.jpg');
    expect(signV2('wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', toSign)).toBe('bWq2s1WEIj+Ydj0vQ697zp+IXMU=');
  });

  it('signs x-amz headers sorted and the subresources of the query, not its other parameters', () => {
    const toSign = stringToSign(
      { method: 'PUT', rawPath: '/b/k', rawQuery: 'uploadId=u%201&partNumber=2&foo=bar', headers: { 'content-type': 'text/plain', 'x-amz-meta-b': ' two  words ', 'x-amz-date': 'D', 'content-md5': 'M' } },
      '',
      { virtualHostBucket: undefined },
    );
    expect(toSign).toBe('PUT\nM\ntext/plain\n\nx-amz-date:D\nx-amz-meta-b:two words\n/b/k?partNumber=2&uploadId=u 1');
    // A bucket itself is signed with a trailing slash, sent path style or virtual-host style.
    expect(stringToSign({ method: 'GET', rawPath: '/b', rawQuery: 'list-type=2&versioning', headers: {} }, 'D', {})).toBe('GET\n\n\nD\n/b/?versioning');
    expect(stringToSign({ method: 'GET', rawPath: '/', rawQuery: '', headers: {} }, 'D', { virtualHostBucket: 'b' })).toBe('GET\n\n\nD\n/b/');
  });
});

describe('requests signed with V2', () => {
  it('a hand-signed PUT and GET with metadata and a subresource', async () => {
    const put = await sendV2('PUT', '/sigv2/hand.txt', { headers: { date: now(), 'content-type': 'text/plain', 'x-amz-meta-color': 'blue' }, body: 'signed the old way' });
    expect(put.status, put.body).toBe(200);
    const get = await sendV2('GET', '/sigv2/hand.txt', { headers: { date: now() } });
    expect(get).toMatchObject({ status: 200, body: 'signed the old way' });
    const tagging = await sendV2('GET', '/sigv2/hand.txt?tagging', { headers: { 'x-amz-date': now() } });
    expect(tagging.status, tagging.body).toBe(200);
  });

  it.each([
    ['a malformed Authorization header', 400, 'InvalidArgument', { authorization: 'AWS HAHAHA' }],
    ['a wrong signature', 403, 'SignatureDoesNotMatch', { secret: 'not-the-secret' }],
    ['an unknown access key', 403, 'InvalidAccessKeyId', { accessKey: 'nobody' }],
    ['no date', 403, 'AccessDenied', { headers: {} }],
    ['an empty date', 403, 'AccessDenied', { headers: { date: '' } }],
    ['an invalid date', 403, 'AccessDenied', { headers: { date: 'Bad Date' } }],
    ['a date before the epoch', 403, 'AccessDenied', { headers: { date: 'Tue, 07 Jul 1950 21:53:04 GMT' } }],
    ['a date in the past', 403, 'RequestTimeTooSkewed', { headers: { date: 'Tue, 07 Jul 2010 21:53:04 GMT' } }],
    ['a date in the future', 403, 'RequestTimeTooSkewed', { headers: { date: 'Tue, 07 Jul 2040 21:53:04 GMT' } }],
  ] as const)('refuses %s with %i %s and stores nothing', async (what, status, code, options) => {
    const key = `refused-${what.replace(/\W+/g, '-')}`;
    const answer = await sendV2('PUT', `/sigv2/${key}`, { headers: { date: now() }, ...options, body: 'must not be stored' });
    expect(answer.status, answer.body).toBe(status);
    expect(answer.code).toBe(code);
    expect(await exists(key)).toBe(false);
  });

  it('a wrong signature is answered with the string the server signed, and no secret', async () => {
    const answer = await sendV2('GET', '/sigv2/hand.txt', { headers: { date: now() }, secret: 'not-the-secret' });
    expect(answer.body).toContain('<StringToSign>GET');
    expect(answer.body).not.toContain(testCredentials.secretAccessKey);
  });

  it('an expired or tampered presigned URL is refused', async () => {
    const expires = Math.floor(Date.now() / 1000) - 10;
    const signature = signV2(testCredentials.secretAccessKey, `GET\n\n\n${expires}\n/sigv2/hand.txt`);
    const expired = await fetch(`${server.url}/sigv2/hand.txt?AWSAccessKeyId=${testCredentials.accessKeyId}&Expires=${expires}&Signature=${encodeURIComponent(signature)}`);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain('<Code>AccessDenied</Code>');
    const later = Math.floor(Date.now() / 1000) + 300;
    const good = signV2(testCredentials.secretAccessKey, `GET\n\n\n${later}\n/sigv2/hand.txt`);
    const ok = await fetch(`${server.url}/sigv2/hand.txt?AWSAccessKeyId=${testCredentials.accessKeyId}&Expires=${later}&Signature=${encodeURIComponent(good)}`);
    expect(await ok.text()).toBe('signed the old way');
    const tampered = await fetch(`${server.url}/sigv2/hand.txt?AWSAccessKeyId=${testCredentials.accessKeyId}&Expires=${later + 1}&Signature=${encodeURIComponent(good)}`);
    expect(tampered.status).toBe(403);
    expect(await tampered.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
  });
});

describe.skipIf(missing.s3cmd !== undefined)('s3cmd with --signature-v2', () => {
  it('puts, lists, gets, deletes, and its signurl serves the object', async () => {
    const url = new URL(server.url);
    const config = join(root, 's3cmd.cfg');
    await writeFile(config, [
      '[default]', `access_key = ${testCredentials.accessKeyId}`, `secret_key = ${testCredentials.secretAccessKey}`, `host_base = ${url.host}`,
      `host_bucket = ${url.host}`, 'use_https = False', 'signature_v2 = True', 'bucket_location = us-east-1', '',
    ].join('\n'));
    const s3cmd = (...args: string[]): string => run('s3cmd', ['-c', config, '--signature-v2', ...args]);
    const source = join(root, 'note.txt');
    await writeFile(source, 'from s3cmd over V2');
    s3cmd('mb', 's3://v2-s3cmd');
    s3cmd('put', '--mime-type=text/plain', source, 's3://v2-s3cmd/dir/note.txt');
    expect(s3cmd('ls', '--recursive', 's3://v2-s3cmd/')).toContain('dir/note.txt');
    const back = join(root, 'note.back');
    s3cmd('get', 's3://v2-s3cmd/dir/note.txt', back);
    expect(await readFile(back, 'utf8')).toBe('from s3cmd over V2');
    const signed = s3cmd('signurl', 's3://v2-s3cmd/dir/note.txt', `+300`).trim();
    expect(signed).toContain('AWSAccessKeyId=');
    expect(await (await fetch(signed)).text()).toBe('from s3cmd over V2');
    s3cmd('del', 's3://v2-s3cmd/dir/note.txt');
    expect(s3cmd('ls', '--recursive', 's3://v2-s3cmd/')).not.toContain('note.txt');
  });
});

describe.skipIf(missing.boto3 !== undefined)('boto3 with the s3 (V2) signer', () => {
  it('puts and gets with metadata, lists, presigns a GET and a POST form', () => {
    const script = `
import boto3, json, sys, urllib.request, requests
from botocore.config import Config
s3 = boto3.client('s3', endpoint_url=sys.argv[1], aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3], region_name='us-east-1',
                  config=Config(signature_version='s3', s3={'addressing_style': 'path'}, retries={'max_attempts': 1}))
s3.put_object(Bucket='sigv2', Key='boto/a b+c.txt', Body=b'boto over V2', ContentType='text/plain', Metadata={'k': 'v'})
head = s3.head_object(Bucket='sigv2', Key='boto/a b+c.txt')
got = s3.get_object(Bucket='sigv2', Key='boto/a b+c.txt', ResponseContentType='application/x-test')
keys = [o['Key'] for o in s3.list_objects_v2(Bucket='sigv2', Prefix='boto/')['Contents']]
url = s3.generate_presigned_url('get_object', Params={'Bucket': 'sigv2', 'Key': 'boto/a b+c.txt'}, ExpiresIn=300)
presigned = urllib.request.urlopen(url).read().decode()
post = s3.generate_presigned_post('sigv2', 'boto/form.txt', ExpiresIn=300)
form = requests.post(post['url'], data=post['fields'], files={'file': ('form.txt', b'posted over V2')})
formed = s3.get_object(Bucket='sigv2', Key='boto/form.txt')['Body'].read().decode()
print(json.dumps({'meta': head['Metadata'], 'body': got['Body'].read().decode(), 'type': got['ContentType'], 'keys': keys,
                  'url': url, 'presigned': presigned, 'formStatus': form.status_code, 'formFields': sorted(post['fields']), 'formed': formed}))
`;
    const result = JSON.parse(run('python3', ['-c', script, server.url, testCredentials.accessKeyId, testCredentials.secretAccessKey]));
    expect(result).toMatchObject({ meta: { k: 'v' }, body: 'boto over V2', type: 'application/x-test', keys: ['boto/a b+c.txt'], presigned: 'boto over V2', formStatus: 204, formed: 'posted over V2' });
    expect(result.url).toContain('AWSAccessKeyId=');
    expect(result.formFields).toEqual(expect.arrayContaining(['AWSAccessKeyId', 'policy', 'signature']));
  });
});

describe('with SVC_API_SIGNATURE_V2=off', () => {
  it('V2 is refused by name and nothing is stored', async () => {
    const off = await startSvc({ args: [join(root, 'off/d{1...4}')], env: { SVC_API_SIGNATURE_V2: 'off' } });
    try {
      await s3ClientFor(off.url).send(new CreateBucketCommand({ Bucket: 'sigv2' }));
      const answer = await sendV2('PUT', '/sigv2/refused', { url: off.url, headers: { date: now() }, body: 'x' });
      expect(answer).toMatchObject({ status: 400, code: 'InvalidRequest' });
      expect(await s3ClientFor(off.url).send(new HeadObjectCommand({ Bucket: 'sigv2', Key: 'refused' })).then(() => true, () => false)).toBe(false);
    } finally {
      await off.stop();
    }
  });
});
