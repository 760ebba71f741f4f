/**
 * A refused write leaves nothing visible, even when the drives that took it cannot be rolled back
 * to their old bytes (full drives): four drives at EC:2 (write quorum 3), a new version reaches
 * two drives only, and those two then refuse every further write. Before, they kept the new
 * version, which won the 2-2 vote against the old one and was read back although the client had
 * been told ErasureWriteQuorum.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Drive } from '../src/drive/index.js';
import { SvcError } from '../src/errors/index.js';
import { chunked, collect, makeTestSet, patternBytes, type TestSet } from './helpers/erasure-set.js';

let test: TestSet | undefined;
afterEach(async () => {
  await test?.cleanup();
  test = undefined;
});

/**
 * A drive whose xl.meta writes fail once `allowed()` says no more may pass (as a full drive's
 * would); with `unreachable()`, its xl.meta removals fail too (as a drive cut off mid-rollback).
 */
function metaWritesLimited(drive: Drive, allowed: () => boolean, unreachable: () => boolean = () => false): Drive {
  return new Proxy(drive, {
    get(target, name, receiver) {
      if (name === 'writeFileAtomic') {
        return async (path: string, bytes: Uint8Array) => {
          if (path.endsWith('xl.meta') && !allowed()) throw new SvcError('DriveFull', `no space left for ${path}`);
          return target.writeFileAtomic(path, bytes);
        };
      }
      if (name === 'deleteFile') {
        return async (path: string) => {
          if (path.endsWith('xl.meta') && unreachable()) throw new SvcError('DriveOffline', `drive unreachable removing ${path}`);
          return target.deleteFile(path);
        };
      }
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * Four drives at EC:2 (write quorum 3) with an old version stored. Then phase 'refuse': drives 2
 * and 3 refuse at once, drives 0 and 1 take one xl.meta write (the new version) and refuse the
 * rollback's; with `unreachable`, their xl.meta removals fail as well.
 */
async function refusingSet(unreachable: boolean): Promise<{ taken: number[]; before: Uint8Array; refuse: () => Promise<SvcError | undefined> }> {
  let phase: 'setup' | 'refuse' = 'setup';
  const taken = [0, 0, 0, 0];
  test = await makeTestSet({
    drives: 4,
    parity: 2,
    wrap: (drive, slot) =>
      metaWritesLimited(
        drive,
        () => {
          if (phase === 'setup') return true;
          taken[slot]! += 1;
          return slot < 2 && taken[slot] === 1;
        },
        () => unreachable && phase === 'refuse' && slot < 2,
      ),
  });
  const before = patternBytes(50_000, 1);
  await test.set.putObject('bucket', 'key', chunked(before), { storageClass: 'STANDARD', versioning: 'unversioned' });
  const refuse = async (): Promise<SvcError | undefined> => {
    phase = 'refuse';
    return test!.set.putObject('bucket', 'key', chunked(patternBytes(60_000, 2)), { storageClass: 'STANDARD', versioning: 'unversioned' }).then(
      () => undefined,
      (error: SvcError) => error,
    );
  };
  return { taken, before, refuse };
}

describe('a write refused below quorum whose rollback cannot restore the old bytes', () => {
  it('is never read back: the drives it reached drop their copy, the old version reads, heal is asked to visit them', async () => {
    const { taken, before, refuse } = await refusingSet(false);
    expect((await refuse())?.code).toBe('ErasureWriteQuorum');
    expect(taken.slice(0, 2)).toEqual([2, 2]);
    const reader = await test!.set.getObject('bucket', 'key');
    expect(Buffer.from(await collect(reader.body)).equals(Buffer.from(before))).toBe(true);
    expect(test!.repairs).toContainEqual(expect.objectContaining({ key: 'key', reason: 'rollback-incomplete', slots: expect.arrayContaining([0, 1]) }));
  });
});

describe('a write refused below quorum whose rollback cannot reach the drives it reached', () => {
  it('is not answered ErasureWriteQuorum: the answer says the outcome is unknown, and heal is asked to visit them', async () => {
    const { refuse } = await refusingSet(true);
    const refused = await refuse();
    // Two of four drives keep the new version, which can win a 2-2 vote: claiming "nothing was
    // committed" would be false, so the answer is the 500 that promises nothing.
    expect(refused?.code).toBe('WriteOutcomeUnknown');
    expect(refused?.details).toMatchObject({ keptOn: [0, 1] });
    expect(test!.repairs).toContainEqual(expect.objectContaining({ key: 'key', reason: 'rollback-incomplete', slots: expect.arrayContaining([0, 1]) }));
  });
});
