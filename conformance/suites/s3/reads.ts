/** GET with ranges, and conditional GET, HEAD and CopyObject. */
import { CopyObjectCommand } from '@aws-sdk/client-s3';
import { expectThat, type Check, type Target } from '../../runner/check.js';
import { expectError, patterned, put } from './support.js';

const size = 1000;

/** [Range header, first byte, last byte] of a satisfiable range on a 1000-byte object. */
const satisfiable: [string, number, number][] = [
  ['bytes=0-0', 0, 0],
  ['bytes=0-99', 0, 99],
  ['bytes=100-199', 100, 199],
  ['bytes=990-999', 990, 999],
  ['bytes=999-999', 999, 999],
  ['bytes=990-5000', 990, 999],
  ['bytes=500-', 500, 999],
  ['bytes=-10', 990, 999],
  ['bytes=-5000', 0, 999],
];

async function rangeObject(target: Target, purpose: string): Promise<string> {
  const bucket = await target.makeBucket(purpose);
  await put(target, bucket, 'bytes', patterned(size));
  return bucket;
}

const rangeChecks: Check[] = satisfiable.map(([range, first, last]) => ({
  id: `s3.range.${range.slice(6).replace('-', 'to') || 'x'}`,
  spec: 'S3 GetObject (Range)',
  title: `Range ${range} of a 1000-byte object answers 206 with bytes ${first}-${last} and Content-Range`,
  async run(target) {
    const bucket = await rangeObject(target, `range-${first}-${last}`);
    const answer = await target.raw({ method: 'GET', path: `/${bucket}/bytes`, headers: { range } });
    expectThat(answer.status === 206, `Range ${range} answered ${answer.status}`);
    expectThat(answer.headers['content-range'] === `bytes ${first}-${last}/${size}`, `Content-Range is ${answer.headers['content-range']}, expected bytes ${first}-${last}/${size}`);
    expectThat(answer.body.equals(patterned(size).subarray(first, last + 1)), `Range ${range} returned ${answer.body.length} bytes that differ from the object's`);
  },
}));

const unsatisfiable = ['bytes=1000-', 'bytes=2000-3000'];

const unsatisfiableChecks: Check[] = unsatisfiable.map((range) => ({
  id: `s3.range.unsatisfiable.${range.slice(6).replace(/-$/, '')}`,
  spec: 'S3 GetObject (Range)',
  title: `Range ${range} past the end of a 1000-byte object answers 416 InvalidRange`,
  async run(target) {
    const bucket = await rangeObject(target, `norange-${range.slice(6, 10)}`);
    const answer = await target.raw({ method: 'GET', path: `/${bucket}/bytes`, headers: { range } });
    expectThat(answer.status === 416 && answer.code === 'InvalidRange', `Range ${range} answered ${answer.status} ${answer.code}`);
  },
}));

interface Condition {
  name: string;
  headers: (etag: string, modified: Date) => Record<string, string>;
  /** Expected status on GET (HEAD gets the same without a body). */
  status: 200 | 304 | 412;
}

const hour = 3_600_000;
const httpDate = (date: Date) => date.toUTCString();

const conditions: Condition[] = [
  { name: 'if-match-same', headers: (etag) => ({ 'if-match': etag }), status: 200 },
  { name: 'if-match-other', headers: () => ({ 'if-match': '"0123456789abcdef0123456789abcdef"' }), status: 412 },
  { name: 'if-match-star', headers: () => ({ 'if-match': '*' }), status: 200 },
  { name: 'if-none-match-same', headers: (etag) => ({ 'if-none-match': etag }), status: 304 },
  { name: 'if-none-match-other', headers: () => ({ 'if-none-match': '"0123456789abcdef0123456789abcdef"' }), status: 200 },
  { name: 'if-modified-since-past', headers: (_etag, modified) => ({ 'if-modified-since': httpDate(new Date(modified.getTime() - 24 * hour)) }), status: 200 },
  { name: 'if-modified-since-future', headers: (_etag, modified) => ({ 'if-modified-since': httpDate(new Date(modified.getTime() + 24 * hour)) }), status: 304 },
  { name: 'if-unmodified-since-past', headers: (_etag, modified) => ({ 'if-unmodified-since': httpDate(new Date(modified.getTime() - 24 * hour)) }), status: 412 },
  { name: 'if-unmodified-since-future', headers: (_etag, modified) => ({ 'if-unmodified-since': httpDate(new Date(modified.getTime() + 24 * hour)) }), status: 200 },
  { name: 'if-match-wins-over-unmodified-since', headers: (etag, modified) => ({ 'if-match': etag, 'if-unmodified-since': httpDate(new Date(modified.getTime() - 24 * hour)) }), status: 200 },
  { name: 'if-none-match-wins-over-modified-since', headers: (etag, modified) => ({ 'if-none-match': etag, 'if-modified-since': httpDate(new Date(modified.getTime() - 24 * hour)) }), status: 304 },
];

const describeCondition = (name: string) => name.replace(/-/g, ' ').replace('if ', 'If-').replace('same', 'the current ETag').replace('other', 'another ETag');

const conditionalChecks: Check[] = (['GET', 'HEAD'] as const).flatMap((method) =>
  conditions.map(({ name, headers, status }) => ({
    id: `s3.conditional.${method.toLowerCase()}.${name}`,
    spec: method === 'GET' ? 'S3 GetObject (conditional)' : 'S3 HeadObject (conditional)',
    title: `${method} with ${describeCondition(name)} answers ${status}`,
    async run(target: Target) {
      const bucket = await target.makeBucket(`cond-${method}-${name}`.slice(0, 40));
      const written = await put(target, bucket, 'doc', 'conditional body');
      const head = await target.raw({ method: 'HEAD', path: `/${bucket}/doc` });
      const modified = new Date(head.headers['last-modified'] ?? Date.now());
      const answer = await target.raw({ method, path: `/${bucket}/doc`, headers: headers(written.ETag!, modified) });
      expectThat(answer.status === status, `${method} with ${JSON.stringify(headers(written.ETag!, modified))} answered ${answer.status}, expected ${status}`);
      if (method === 'GET' && status === 200) expectThat(answer.text === 'conditional body', 'a conditional GET that passed returned another body');
      if (method === 'GET' && status === 412) expectThat(answer.code === 'PreconditionFailed', `a failed precondition answered ${answer.code}, not PreconditionFailed`);
      if (status === 304) expectThat(answer.body.length === 0, '304 Not Modified carried a body');
    },
  })),
);

/** CopyObject preconditions on the source: [header, value maker, whether the copy happens]. */
const copyConditions: [string, (etag: string) => string, boolean][] = [
  ['x-amz-copy-source-if-match', (etag) => etag, true],
  ['x-amz-copy-source-if-match', () => '"0123456789abcdef0123456789abcdef"', false],
  ['x-amz-copy-source-if-none-match', (etag) => etag, false],
  ['x-amz-copy-source-if-none-match', () => '"0123456789abcdef0123456789abcdef"', true],
  ['x-amz-copy-source-if-unmodified-since', () => httpDate(new Date(Date.now() - 48 * hour)), false],
  ['x-amz-copy-source-if-modified-since', () => httpDate(new Date(Date.now() + 48 * hour)), false],
];

const copyConditionChecks: Check[] = copyConditions.map(([header, value, copies], index) => ({
  id: `s3.conditional.copy.${header.slice('x-amz-copy-source-'.length)}.${copies ? 'copies' : 'refused'}`,
  spec: 'S3 CopyObject (conditional)',
  title: `CopyObject with ${header} ${copies ? 'holding' : 'failing'} ${copies ? 'copies' : 'answers 412 PreconditionFailed and copies nothing'}`,
  async run(target) {
    const bucket = await target.makeBucket(`copycond-${index}`);
    const written = await put(target, bucket, 'source', 'copy me');
    const answer = await target.raw({ method: 'PUT', path: `/${bucket}/target`, headers: { 'x-amz-copy-source': `/${bucket}/source`, [header]: value(written.ETag!) } });
    if (copies) expectThat(answer.status === 200, `CopyObject with ${header} answered ${answer.status} ${answer.code}`);
    else expectThat(answer.status === 412 && answer.code === 'PreconditionFailed', `CopyObject with a failing ${header} answered ${answer.status} ${answer.code}`);
    const after = await target.raw({ method: 'HEAD', path: `/${bucket}/target` });
    expectThat((after.status === 200) === copies, `after the copy the target ${after.status === 200 ? 'exists' : 'is absent'}`);
  },
}));

export const readChecks: Check[] = [
  ...rangeChecks,
  ...unsatisfiableChecks,
  {
    id: 's3.range.ignored-when-malformed',
    spec: 'S3 GetObject (Range)',
    title: 'a Range header that is not a byte range is ignored: 200 with the whole object',
    async run(target) {
      const bucket = await rangeObject(target, 'badrange');
      const answer = await target.raw({ method: 'GET', path: `/${bucket}/bytes`, headers: { range: 'lines=1-2' } });
      expectThat(answer.status === 200 && answer.body.equals(patterned(size)), `Range lines=1-2 answered ${answer.status} with ${answer.body.length} bytes`);
    },
  },
  {
    id: 's3.range.head-accept-ranges',
    spec: 'S3 GetObject (Range)',
    title: 'GET answers Accept-Ranges: bytes',
    async run(target) {
      const bucket = await rangeObject(target, 'acceptranges');
      const answer = await target.raw({ method: 'GET', path: `/${bucket}/bytes` });
      expectThat(answer.headers['accept-ranges'] === 'bytes', `Accept-Ranges is ${answer.headers['accept-ranges']}`);
    },
  },
  ...conditionalChecks,
  ...copyConditionChecks,
  {
    id: 's3.conditional.copy-missing-source',
    spec: 'S3 CopyObject',
    title: 'CopyObject from a missing key answers NoSuchKey',
    async run(target) {
      const bucket = await target.makeBucket('copymissing');
      await expectError(target.s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'to', CopySource: `${bucket}/absent` })), 'NoSuchKey', 'CopyObject from a missing key', 404);
    },
  },
];
