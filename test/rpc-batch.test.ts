import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { BatchAnswerReceiver, decodeBatchAnswer, decodeBatchRequest, encodeBatchAnswer, encodeBatchRequest, type BatchOperation, type BatchOutcome } from '../src/transport/rpc-batch.js';
import { isSvcError } from '../src/errors/index.js';
import { runDriveBatch } from '../src/api/rpc/drive-rpc-plugin.js';
import { createMemfsDrive } from '../backends/memfs/memfs-drive.js';
import { BufferPool } from '../src/util/buffer-pool.js';
import { batchDriveOperations, requestDriveOperations, type BatchDriveOperation, type RequestDriveOperation } from '../src/transport/drive-operations.js';

const concat = (pieces: Uint8Array[]) => new Uint8Array(Buffer.concat(pieces));

const operation: fc.Arbitrary<BatchOperation> = fc.record({
  header: fc.record(
    {
      drive: fc.string({ unit: 'grapheme', maxLength: 40 }),
      op: fc.constantFrom('read', 'atomic', 'rename', 'stat', 'range'),
      path: fc.string({ unit: 'grapheme', maxLength: 200 }),
      source: fc.string({ unit: 'grapheme', maxLength: 60 }),
      target: fc.string({ maxLength: 60 }),
      offset: fc.nat({ max: Number.MAX_SAFE_INTEGER }),
      length: fc.nat(),
      sync: fc.boolean(),
    },
    { requiredKeys: ['drive', 'op'] },
  ),
  body: fc.uint8Array({ maxLength: 300 }),
});
const outcome: fc.Arbitrary<BatchOutcome> = fc.oneof(
  fc.record({ ok: fc.constant(true as const), bytes: fc.uint8Array({ maxLength: 300 }) }),
  fc.record({ ok: fc.constant(false as const), code: fc.constantFrom('FileNotFound', 'DriveOffline'), message: fc.string() }),
);

/** The error code `run` fails with, or 'accepted'. */
function refused(run: () => unknown): string {
  try {
    run();
    return 'accepted';
  } catch (error) {
    return isSvcError(error) ? error.code : String(error);
  }
}

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

  it('packs an operation header in binary: a read of xl.meta is its names and a few bytes around them', () => {
    const request = concat(encodeBatchRequest([{ header: { drive: '/data/d1', op: 'read', path: 'bucket/key/xl.meta' } }]));
    // flags, op (u8 length + 4), drive (u16 length + 8), path (u16 length + 18), body length (u32, no body)
    expect(request.length).toBe(1 + 1 + 4 + 2 + 8 + 2 + 18 + 4);
    const [decoded] = decodeBatchRequest(request);
    expect(decoded!.header).toEqual({ drive: '/data/d1', op: 'read', path: 'bucket/key/xl.meta' });
    const answer = concat(encodeBatchAnswer([{ ok: false, code: 'FileNotFound', message: 'no such file' }]));
    expect(answer.length).toBe(1 + 4 + 1 + 12 + 12);
  });

  it('refuses a truncated message, a header with unknown fields or no op, and an answer with the wrong number of outcomes', () => {
    const request = concat(encodeBatchRequest([{ header: { drive: '/d1', op: 'read', path: 'a' } }]));
    for (let cut = 1; cut < request.length; cut += 1) expect(refused(() => decodeBatchRequest(request.subarray(0, cut))), `cut at ${cut}`).toBe('InvalidArgument');
    const withFlags = Buffer.from(request);
    withFlags[0] = 0x80;
    expect(refused(() => decodeBatchRequest(withFlags))).toBe('InvalidArgument');
    expect(refused(() => decodeBatchRequest(concat(encodeBatchRequest([{ header: { drive: '/d1', op: '' } }]))))).toBe('InvalidArgument');
    expect(refused(() => encodeBatchRequest([{ header: { drive: '/d1', op: 'read', path: 'é'.repeat(40_000) } }]))).toBe('InvalidArgument');
    const answer = concat(encodeBatchAnswer([{ ok: true, bytes: new Uint8Array([1]) }]));
    expect(refused(() => decodeBatchAnswer(answer, 2))).toBe('InvalidArgument');
  });

  it('property: an answer received in pieces of any size decodes as a whole one does, each ok outcome copied into the memory its operation named', () => {
    const answerWithInto = fc.array(fc.tuple(outcome, fc.option(fc.nat({ max: 400 }), { nil: undefined })), { maxLength: 12 });
    fc.assert(
      fc.property(answerWithInto, fc.array(fc.nat(), { maxLength: 30 }), (entries, cuts) => {
        const outcomes = entries.map(([entry]) => entry);
        const into = entries.map(([, room]) => (room === undefined ? undefined : new Uint8Array(room).fill(0xee)));
        const wire = Buffer.from(concat(encodeBatchAnswer(outcomes)));
        const receiver = new BatchAnswerReceiver(into);
        // through one reused buffer, scribbled over after each piece: nothing may keep a view of it
        const scratch = Buffer.alloc(wire.length);
        let from = 0;
        for (const end of [...new Set(cuts.map((cut) => cut % (wire.length + 1)))].sort((a, b) => a - b).concat(wire.length)) {
          if (end <= from) continue;
          wire.copy(scratch, 0, from, end);
          receiver.write(scratch.subarray(0, end - from));
          scratch.fill(0xa5);
          from = end;
        }
        const received = receiver.end();
        const whole = decodeBatchAnswer(wire, outcomes.length);
        received.forEach((got, index) => {
          const expected = whole[index]!;
          const room = into[index];
          if (!expected.ok || !got.ok) return expect(got).toEqual(expected);
          const kept = room ? expected.bytes.subarray(0, room.length) : expected.bytes;
          expect(Buffer.from(got.bytes)).toEqual(Buffer.from(kept));
          if (room) {
            expect(got.bytes.buffer).toBe(room.buffer); // a view of the named memory, not a copy
            expect(got.bytes.byteOffset).toBe(room.byteOffset);
            expect(Buffer.from(room.subarray(kept.length)).every((byte) => byte === 0xee)).toBe(true); // nothing written past the outcome
          }
        });
      }),
      { numRuns: 300 },
    ); // on failure fast-check prints the seed and path that replay it (fc.assert's { seed, path })
  });

  it('refuses, received in pieces, an answer that is truncated or has the wrong number of outcomes', () => {
    const answer = Buffer.from(concat(encodeBatchAnswer([{ ok: true, bytes: new Uint8Array([1, 2, 3]) }, { ok: false, code: 'FileNotFound', message: 'gone' }])));
    for (let cut = 1; cut < answer.length; cut += 1) {
      const receiver = new BatchAnswerReceiver([new Uint8Array(8), undefined]);
      receiver.write(answer.subarray(0, cut));
      expect(refused(() => receiver.end()), `cut at ${cut}`).toBe('InvalidArgument');
    }
    const tooFew = new BatchAnswerReceiver([undefined, undefined, undefined]);
    tooFew.write(answer);
    expect(refused(() => tooFew.end())).toBe('InvalidArgument');
    expect(refused(() => new BatchAnswerReceiver([undefined]).write(answer))).toBe('InvalidArgument');
    const badError = Buffer.from([1, 0, 0, 0, 0]); // a failed outcome with no code
    expect(refused(() => new BatchAnswerReceiver([undefined]).write(badError))).toBe('InvalidArgument');
  });
});

describe('drive operation names', () => {
  it('refuses a name that is no batch operation for that operation alone (names of Object.prototype too)', async () => {
    const drive = createMemfsDrive();
    await drive.writeFile('present', new Uint8Array([1, 2, 3]));
    const names = ['toString', '__proto__', 'constructor', 'stream', 'read'];
    const { answer } = await runDriveBatch(() => drive, concat(encodeBatchRequest(names.map((op) => ({ header: { drive: '/d', op, path: 'present' } })))), new BufferPool(0));
    const outcomes = decodeBatchAnswer(concat(answer), names.length);
    expect(outcomes.map((outcome) => (outcome.ok ? 'ok' : outcome.code))).toEqual(['InvalidArgument', 'InvalidArgument', 'InvalidArgument', 'InvalidArgument', 'ok']);
    expect(outcomes[4]).toEqual({ ok: true, bytes: new Uint8Array([1, 2, 3]) });
  });

  it('types the names: a batch operation is a request operation too, and a misspelled one does not compile', () => {
    const every: RequestDriveOperation[] = [...batchDriveOperations];
    expect(every.every((op) => op in requestDriveOperations)).toBe(true);
    // @ts-expect-error -- 'stream' has a request of its own, it never travels in a batch
    const streamed: BatchDriveOperation = 'stream';
    // @ts-expect-error -- no such operation
    const misspelled: RequestDriveOperation = 'delete_file';
    expect([streamed, misspelled]).toHaveLength(2);
  });
});
