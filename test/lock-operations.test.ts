import { describe, expect, it } from 'vitest';
import { decodeLockAnswer, decodeLockCall, type LockCall } from '../src/transport/lock-operations.js';
import { isSvcError } from '../src/errors/index.js';
import { limits } from '../src/util/limits.js';

function refusal(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return isSvcError(error) ? `${error.code}: ${error.message}` : `not a named error: ${String(error)}`;
  }
  return undefined;
}

describe('lock calls between nodes', () => {
  const calls: LockCall[] = [
    { op: 'acquire', resource: 'bucket/key', mode: 'write', uid: 'u1', ttlMs: 30_000 },
    { op: 'refresh', resource: 'bucket/key', uid: 'u1', ttlMs: 30_000 },
    { op: 'release', resource: 'bucket/key', uid: 'u1' },
  ];

  it('every kind round-trips through its JSON, with its answer', () => {
    for (const call of calls) expect(decodeLockCall(JSON.parse(JSON.stringify(call)))).toEqual(call);
    expect(decodeLockAnswer(calls[0]!, { granted: false })).toEqual({ granted: false });
    expect(decodeLockAnswer(calls[1]!, { refreshed: true })).toEqual({ refreshed: true });
    expect(decodeLockAnswer(calls[2]!, { released: true })).toEqual({ released: true });
    expect(decodeLockAnswer(calls[0]!, { code: 'InvalidArgument', message: 'unknown lock operation' })).toEqual({ code: 'InvalidArgument', message: 'unknown lock operation' });
  });

  it('an unknown or malformed call is a named error; an expiry out of range is the default', () => {
    expect(refusal(() => decodeLockCall({ op: 'steal', resource: 'r', uid: 'u' }))).toBe('InvalidArgument: unknown lock operation');
    expect(refusal(() => decodeLockCall({ op: 'acquire', resource: 'r', uid: 'u', mode: 'exclusive' }))).toBe('InvalidArgument: mode must be read or write');
    expect(refusal(() => decodeLockCall({ op: 'release', resource: 'r' }))).toBe('InvalidArgument: resource and uid are required');
    expect(refusal(() => decodeLockCall(null, 'refresh'))).toBe('InvalidArgument: resource and uid are required');
    expect(decodeLockCall({ resource: 'r', uid: 'u', ttlMs: limits.maxLockTtlMs + 1 }, 'refresh')).toEqual({ op: 'refresh', resource: 'r', uid: 'u', ttlMs: limits.lockExpiryMs });
  });

  it("an answer that is not the call's is refused", () => {
    expect(() => decodeLockAnswer(calls[0]!, { refreshed: true })).toThrow(/not its answer/);
    expect(() => decodeLockAnswer(calls[2]!, 'yes')).toThrow(/not an object/);
  });
});
