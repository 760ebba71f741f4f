import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeBatchAnswer, decodeBatchRequest, encodeBatchAnswer, encodeBatchRequest, type BatchOperation, type BatchOutcome } from '../src/util/rpc-batch.js';
import { isSvcError } from '../src/errors/index.js';

const concat = (pieces: Uint8Array[]) => new Uint8Array(Buffer.concat(pieces));

const operation: fc.Arbitrary<BatchOperation> = fc.record({
  header: fc.record({ drive: fc.string(), op: fc.constantFrom('read', 'atomic', 'rename', 'stat'), path: fc.string() }),
  body: fc.uint8Array({ maxLength: 300 }),
});
const outcome: fc.Arbitrary<BatchOutcome> = fc.oneof(
  fc.record({ ok: fc.constant(true as const), bytes: fc.uint8Array({ maxLength: 300 }) }),
  fc.record({ ok: fc.constant(false as const), code: fc.constantFrom('FileNotFound', 'DriveOffline'), message: fc.string() }),
);

describe('internode batch wire format', () => {
  it('property: requests and answers decode to exactly what was encoded', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 20 }), fc.array(outcome, { maxLength: 20 }), (operations, outcomes) => {
        const decoded = decodeBatchRequest(concat(encodeBatchRequest(operations)));
        expect(decoded.map(({ header, body }) => ({ header, body: Buffer.from(body ?? []) }))).toEqual(operations.map(({ header, body }) => ({ header, body: Buffer.from(body ?? []) })));
        const answers = decodeBatchAnswer(concat(encodeBatchAnswer(outcomes)), outcomes.length);
        expect(answers.map((entry) => (entry.ok ? { ok: true, bytes: Buffer.from(entry.bytes) } : entry))).toEqual(outcomes.map((entry) => (entry.ok ? { ok: true, bytes: Buffer.from(entry.bytes) } : entry)));
      }),
    );
  });

  it('refuses a truncated message, a header that is not JSON, and an answer with the wrong number of outcomes', () => {
    const request = concat(encodeBatchRequest([{ header: { drive: '/d1', op: 'read', path: 'a' } }]));
    const refused = (run: () => unknown) => {
      try {
        run();
        return 'accepted';
      } catch (error) {
        return isSvcError(error) ? error.code : String(error);
      }
    };
    for (let cut = 1; cut < request.length; cut += 1) expect(refused(() => decodeBatchRequest(request.subarray(0, cut))), `cut at ${cut}`).toBe('InvalidArgument');
    expect(refused(() => decodeBatchRequest(concat([Buffer.from([0, 0, 0, 2]), Buffer.from('{x'), Buffer.alloc(4)])))).toBe('InvalidArgument');
    expect(refused(() => decodeBatchRequest(concat([Buffer.from([0, 0, 0, 2]), Buffer.from('{}'), Buffer.alloc(4)])))).toBe('InvalidArgument');
    const answer = concat(encodeBatchAnswer([{ ok: true, bytes: new Uint8Array([1]) }]));
    expect(refused(() => decodeBatchAnswer(answer, 2))).toBe('InvalidArgument');
  });
});
