/**
 * `rc` client code in-process, with the S3 client mocked (aws-sdk-client-mock) for the cases a
 * live server does not produce on demand: throttling, network failures, and terminal output.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mockClient } from 'aws-sdk-client-mock';
import { AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, ListObjectsV2Command, S3Client, S3ServiceException, UploadPartCommand } from '@aws-sdk/client-s3';
import { writeFile } from 'node:fs/promises';
import { runRc } from '../src/cli/rc/run.js';
import type { RcIo } from '../src/cli/rc/context.js';

const s3 = mockClient(S3Client);
let configDir: string;

function io(isTTY = false): RcIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { env: { RC_CONFIG_DIR: configDir }, out: (text) => stdout.push(text), err: (text) => stderr.push(text), write: async (bytes) => void stdout.push(Buffer.from(bytes).toString()), isTTY, stdout, stderr };
}

beforeAll(async () => {
  configDir = await mkdtemp(join(tmpdir(), 'svc-rc-unit-'));
  expect(await runRc(['alias', 'set', 'mocked', 'http://127.0.0.1:1', 'key', 'secret-key'], io())).toBe(0);
});
afterEach(() => s3.reset());
afterAll(async () => {
  s3.restore();
  await rm(configDir, { recursive: true, force: true });
});

describe('rc (mocked S3 client)', () => {
  it('reports throttling as one line with the code and a non-zero exit', async () => {
    s3.on(ListObjectsV2Command).rejects(new S3ServiceException({ name: 'SlowDown', $fault: 'server', $metadata: { httpStatusCode: 503 }, message: 'Please reduce your request rate.' }));
    const terminal = io();
    expect(await runRc(['ls', 'mocked/bucket'], terminal)).toBe(1);
    expect(terminal.stderr).toEqual(['rc: list objects: SlowDown: Please reduce your request rate.']);
  });

  it('reports a network failure with its cause', async () => {
    s3.on(ListObjectsV2Command).rejects(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }));
    const terminal = io();
    expect(await runRc(['ls', 'mocked/bucket', '--recursive'], terminal)).toBe(1);
    expect(terminal.stderr[0]).toBe('rc: list objects: ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1');
  });

  it('prints tables for people and JSON for scripts from the same answer', async () => {
    s3.on(ListObjectsV2Command).resolves({ Contents: [{ Key: 'a.txt', Size: 2048, LastModified: new Date('2026-01-02T03:04:05Z') }], CommonPrefixes: [{ Prefix: 'dir/' }], IsTruncated: false });
    const human = io();
    expect(await runRc(['ls', 'mocked/bucket'], human)).toBe(0);
    expect(human.stdout[0]).toBe(['MODIFIED                  SIZE     KEY', '2026-01-02T03:04:05.000Z  2.0 KiB  a.txt', '                          DIR      dir/'].join('\n'));
    const script = io();
    expect(await runRc(['ls', 'mocked/bucket', '--json'], script)).toBe(0);
    expect(JSON.parse(script.stdout[0]!)).toEqual([
      { key: 'a.txt', size: 2048, modified: '2026-01-02T03:04:05.000Z', prefix: false },
      { key: 'dir/', size: 0, prefix: true },
    ]);
  });

  it('usage errors exit 2 with the usage line', async () => {
    const terminal = io();
    expect(await runRc(['ls'], terminal)).toBe(2);
    expect(terminal.stderr[0]).toContain('usage: rc ls');
    const unknown = io();
    expect(await runRc(['ls', 'mocked/b', '--colour'], unknown)).toBe(2);
    expect(unknown.stderr[0]).toMatch(/Unknown option '--colour'/);
  });

  it('draws a progress bar on a terminal for a multipart upload, and aborts the upload when a part fails', async () => {
    const file = join(configDir, 'large.bin');
    await writeFile(file, Buffer.alloc(40 * 1024 * 1024, 7));
    s3.on(CreateMultipartUploadCommand).resolves({ UploadId: 'u1' });
    s3.on(UploadPartCommand).resolves({ ETag: '"part"' });
    s3.on(CompleteMultipartUploadCommand).resolves({ ETag: '"whole-3"' });
    const terminal = io(true);
    expect(await runRc(['cp', file, 'mocked/bucket/large.bin'], terminal)).toBe(0);
    expect(s3.commandCalls(UploadPartCommand)).toHaveLength(3);
    expect(terminal.stderr.some((line) => line.startsWith('\rupload [') && line.includes('100%'))).toBe(true);
    expect(terminal.stdout[0]).toContain('uploaded 40.0 MiB');

    s3.reset();
    s3.on(CreateMultipartUploadCommand).resolves({ UploadId: 'u2' });
    s3.on(AbortMultipartUploadCommand).resolves({});
    s3.on(UploadPartCommand).rejects(new S3ServiceException({ name: 'InternalError', $fault: 'server', $metadata: { httpStatusCode: 500 }, message: 'disk on fire' }));
    const failing = io(false);
    expect(await runRc(['cp', file, 'mocked/bucket/large.bin'], failing)).toBe(1);
    expect(failing.stderr[0]).toContain('InternalError: disk on fire');
    expect(s3.commandCalls(AbortMultipartUploadCommand)).toHaveLength(1);
    expect(failing.stderr.some((line) => line.includes('['))).toBe(false); // no bar when not a terminal
  });
});
