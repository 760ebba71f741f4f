/**
 * A coding thread: keeps the digest state of the sessions assigned to it and codes their blocks
 * in the shared buffers the event loop fills. Messages of one session arrive in order, so the
 * digests see the body in order. Protocol: ./worker-coding.ts.
 */
import { parentPort } from 'node:worker_threads';
import { codecFor, defaultCodecId } from '../../erasure/codecs.js';
import type { ErasureCodec } from '../../erasure/codec.js';
import { codeBlockInto, frameCapacityBytes } from './block-coder.js';
import { BodyDigests } from './digests.js';
import type { CodingRequest, CodingReply } from './worker-coding.js';

interface Session {
  codec: ErasureCodec;
  digests: BodyDigests;
}

const sessions = new Map<number, Session>();
const port = parentPort!;

port.on('message', (request: CodingRequest) => {
  if (request.kind === 'open') {
    sessions.set(request.session, { codec: codecFor(defaultCodecId, request.dataShards, request.parityShards), digests: new BodyDigests(request.algorithms) });
    return;
  }
  if (request.kind === 'discard') {
    sessions.delete(request.session);
    return;
  }
  try {
    const session = sessions.get(request.session);
    if (!session) throw new Error(`no coding session ${request.session}`);
    if (request.kind === 'finish') {
      sessions.delete(request.session);
      reply({ id: request.id, values: session.digests.finish() });
      return;
    }
    const k = session.codec.dataShards;
    const totalShards = k + session.codec.parityShards;
    const frameBytes = frameCapacityBytes(request.blockSizeBytes, k);
    const block = new Uint8Array(request.memory, 0, request.lengthBytes);
    const frames = Array.from({ length: totalShards }, (_, index) => new Uint8Array(request.memory, request.blockSizeBytes + index * frameBytes, frameBytes));
    session.digests.update(block);
    codeBlockInto(session.codec, block, frames);
    reply({ id: request.id });
  } catch (error) {
    reply({ id: request.id, error: String(error instanceof Error ? error.message : error) });
  }
});

function reply(message: CodingReply): void {
  port.postMessage(message);
}
