/**
 * The IAM store's sessions with a fake clock: expiry to the millisecond, the duration bounds, a
 * service account's session ending when the account gets a new secret, and a web identity's
 * policies read live (a removed policy grants nothing more).
 */
import { describe, expect, it } from 'vitest';
import { IamStore, type IamDocument } from '../src/ops/iam-store.js';
import type { StateStore } from '../src/ops/state-store.js';
import { isSvcError } from '../src/errors/index.js';

function storeWithClock(): { iam: IamStore; clock: { nowMs: number } } {
  let saved: IamDocument | undefined;
  const store = { load: async () => (saved ? structuredClone(saved) : undefined), save: async (document: IamDocument) => void (saved = structuredClone(document)) } as unknown as StateStore<IamDocument>;
  const clock = { nowMs: 1_800_000_000_000 };
  const iam = new IamStore({ store, root: { accessKey: 'root', secretKey: 'root-secret' }, nowMs: () => clock.nowMs, announce: async () => undefined });
  return { iam, clock };
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (isSvcError(error)) return error.code;
    throw error;
  }
}

describe('IamStore sessions', () => {
  it('expire at their expiry to the millisecond, and take durations from 900 to 43200 seconds', async () => {
    const { iam, clock } = storeWithClock();
    await iam.addUser('alice', 'alice-secret', ['readonly']);
    const user = iam.resolve('alice')!.principal;
    for (const seconds of [899, 43_201, 1.5]) expect(codeOf(() => iam.assumeRole(user, { durationSeconds: seconds })), String(seconds)).toBe('ValidationError');
    expect(iam.assumeRole(user, { durationSeconds: 43_200 }).expiresMs).toBe(clock.nowMs + 43_200_000);
    const session = iam.assumeRole(user, { durationSeconds: 900 });
    clock.nowMs += 900_000 - 1;
    expect(iam.resolve(session.accessKey, session.sessionToken)?.principal).toMatchObject({ kind: 'session', parentUser: 'alice' });
    clock.nowMs += 1;
    expect(codeOf(() => iam.resolve(session.accessKey, session.sessionToken))).toBe('ExpiredToken');
  });

  it("ends a service account's sessions when the account gets a new secret", async () => {
    const { iam, clock } = storeWithClock();
    await iam.addUser('alice', 'alice-secret', ['readonly']);
    await iam.addServiceAccount('alice', { accessKey: 'alice-app', secretKey: 'alice-app-secret' });
    const session = iam.assumeRole(iam.resolve('alice-app')!.principal, {});
    expect(iam.resolve(session.accessKey, session.sessionToken)?.principal.parentUser).toBe('alice');
    clock.nowMs += 1;
    await iam.updateServiceAccount('alice-app', { secretKey: 'alice-app-secret-2' });
    expect(iam.resolve(session.accessKey, session.sessionToken)).toBeUndefined();
  });

  it("reads a web identity's policies at each request", async () => {
    const { iam } = storeWithClock();
    await iam.createPolicy('team', { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::team/*'] }] });
    expect(codeOf(() => iam.assumeRoleWithWebIdentity({ subject: 'carol', policies: ['nothing-here'], claims: {} }, {}))).toBe('IDPRejectedClaim');
    const session = iam.assumeRoleWithWebIdentity({ subject: 'carol', policies: ['team', 'nothing-here'], claims: { sub: 'carol' } }, {});
    expect(session.parent).toBe('oidc:carol');
    expect(iam.resolve(session.accessKey, session.sessionToken)?.principal.grants).toHaveLength(1);
    await iam.removePolicy('team');
    expect(iam.resolve(session.accessKey, session.sessionToken)?.principal.grants).toHaveLength(0);
  });
});
