import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { answerFrame, answerLayout, callFrame, callLayout, FrameReader, RpcStreamFailure } from '../src/transport/rpc-stream.js';

interface Sent { id: number; token: string; body: Buffer }

const frames = fc.array(
  fc.record({
    id: fc.integer({ min: 0, max: 0xffffffff }),
    token: fc.string({ maxLength: 40 }),
    body: fc.oneof(fc.uint8Array({ maxLength: 64 }), fc.uint8Array({ minLength: 4000, maxLength: 20_000 })).map((bytes) => Buffer.from(bytes)),
  }),
  { maxLength: 12 },
);

/** Feeds `stream` to `reader` through one reused buffer, cut at `cuts`, scribbling over it after each push. */
function feedThroughReusedBuffer(reader: FrameReader, stream: Buffer, cuts: number[]): void {
  const scratch = Buffer.alloc(stream.length + 1);
  const ends = [...new Set(cuts.map((cut) => cut % (stream.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const end of [...ends, stream.length]) {
    if (end <= from) continue;
    stream.copy(scratch, 0, from, end);
    reader.push(scratch.subarray(0, end - from));
    scratch.fill(0xa5); // the next read lands in the same memory
    from = end;
  }
}

describe('FrameReader', () => {
  it('hands out every frame byte for byte, whatever the chunk boundaries, and never writes a handed-out frame again', () => {
    fc.assert(
      fc.property(frames, fc.array(fc.nat(), { maxLength: 40 }), fc.boolean(), (sent: Sent[], cuts, calls) => {
        const got: { head: Buffer; body: Buffer }[] = [];
        const layout = calls ? callLayout : answerLayout;
        const reader = new FrameReader(layout, (head, body) => got.push({ head, body }), 1 << 20);
        const stream = Buffer.concat(sent.flatMap((frame) => (calls ? callFrame('lock', frame.id, frame.token, [frame.body]) : answerFrame(frame.id, frame.id % 2 === 0, [frame.body]))));
        feedThroughReusedBuffer(reader, stream, cuts);
        expect(got.length).toBe(sent.length);
        got.forEach(({ head, body }, index) => {
          const frame = sent[index]!;
          expect(Buffer.compare(body, frame.body)).toBe(0);
          if (calls) {
            expect(head.readUInt32BE(1)).toBe(frame.id);
            expect(head.toString('utf8', 7, head.length - 4)).toBe(frame.token);
          } else {
            expect(head.readUInt32BE(0)).toBe(frame.id);
            expect(head.readUInt8(4)).toBe(frame.id % 2 === 0 ? 0 : 1);
          }
        });
      }),
      { numRuns: 200 },
    ); // on failure fast-check prints the seed and path that replay it (fc.assert's { seed, path })
  });

  it('gives the body of a frame its head asks a sink for to that sink, piece by piece as it arrives, and gathers the others', () => {
    fc.assert(
      fc.property(frames, fc.array(fc.nat(), { maxLength: 40 }), (sent: Sent[], cuts) => {
        const got: { id: number; body: Buffer; sunk: boolean }[] = [];
        const reader = new FrameReader(
          answerLayout,
          (head, body) => got.push({ id: head.readUInt32BE(0), body, sunk: false }),
          1 << 20,
          (head) => {
            const id = head.readUInt32BE(0);
            if (id % 3 === 0) return undefined;
            const pieces: Buffer[] = [];
            return { write: (bytes) => pieces.push(Buffer.from(bytes)), end: () => got.push({ id, body: Buffer.concat(pieces), sunk: true }) };
          },
        );
        feedThroughReusedBuffer(reader, Buffer.concat(sent.flatMap((frame) => answerFrame(frame.id, true, [frame.body]))), cuts);
        expect(got.map(({ id, body, sunk }) => ({ id, body: body.toString('hex'), sunk }))).toEqual(sent.map(({ id, body }) => ({ id, body: body.toString('hex'), sunk: id % 3 !== 0 })));
      }),
      { numRuns: 200 },
    ); // on failure fast-check prints the seed and path that replay it (fc.assert's { seed, path })
  });

  it('refuses a frame longer than its limit as soon as its head arrives', () => {
    const reader = new FrameReader(answerLayout, () => undefined, 100);
    const [head] = answerFrame(1, true, [Buffer.alloc(101)]);
    expect(() => reader.push(head!)).toThrow(RpcStreamFailure);
  });
});
