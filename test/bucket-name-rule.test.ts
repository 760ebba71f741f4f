/**
 * The bucket naming rule is written once (src/contracts/bucket-name.ts) for the S3 router, the
 * console's server and its browser code: it accepts exactly the names AWS's rule accepts (a
 * reference written from AWS's documented rule), and names the rule each refused name breaks.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { bucketNameProblem } from '../src/contracts/bucket-name.js';
import { isValidBucketName } from '../src/api/s3/router.js';

const seed = Number(process.env.SVC_PROPERTY_SEED ?? Date.now() % 2 ** 31);
console.log(`bucket-name-rule property seed ${seed} (replay with SVC_PROPERTY_SEED=${seed})`);

/** AWS's general purpose bucket naming rule, as documented. */
function reference(name: string): boolean {
  return (
    /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(name) &&
    !name.includes('..') &&
    !name.includes('.-') &&
    !name.includes('-.') &&
    !/^\d+\.\d+\.\d+\.\d+$/.test(name) &&
    !name.startsWith('xn--') &&
    !name.endsWith('-s3alias')
  );
}

const names = fc.oneof(
  fc.stringMatching(/^[a-z0-9.\-A_]{0,70}$/),
  fc.constantFrom('xn--abc', 'abc-s3alias', '192.168.1.1', 'a.-b', 'a-.b', 'a..b', 'ab', 'a'.repeat(63), 'a'.repeat(64)),
);

describe('the bucket naming rule', () => {
  it('accepts exactly what the reference accepts, in the router and the console alike', () => {
    fc.assert(
      fc.property(names, (name) => {
        expect(bucketNameProblem(name) === undefined).toBe(reference(name));
        expect(isValidBucketName(name)).toBe(reference(name));
      }),
      { seed, numRuns: 2000 },
    );
  });

  it('says which rule a name breaks', () => {
    expect(bucketNameProblem('Photos')).toBe('Bucket names use only lowercase letters, digits, dots and hyphens.');
    expect(bucketNameProblem('ab')).toBe('Bucket names are 3 to 63 characters long.');
    expect(bucketNameProblem('-photos')).toBe('Bucket names begin and end with a letter or digit.');
    expect(bucketNameProblem('a.-b')).toBe('Bucket names have no dot next to a hyphen.');
    expect(bucketNameProblem('10.0.0.1')).toBe('Bucket names are not formatted as an IP address.');
    expect(bucketNameProblem('photos-2026')).toBeUndefined();
  });
});
