/**
 * A coding thread: keeps the digest state of the sessions assigned to it and codes their blocks
 * in the shared buffers the event loop fills. Messages of one session arrive in order, so the
 * digests see the body in order. Protocol: ./worker-coding.ts.
 */
import { parentPort } from 'node:worker_threads';
import { codecFor, defaultCodecId } from '../../erasure/codecs.js';
import type { ErasureCodec } from '../../erasure/codec.js';
import { codeBlockInto } from './block-coder.js';
import { blockBufferViews } from './coding.js';
import { BodyDigests } from './digests.js';
import type { CodingRequest, CodingReply } from './worker-coding.js';

interface Session {
  /** None for a session that only digests. */
  codec: ErasureCodec | undefined;
  digests: BodyDigests;
}

const sessions = new Map<number, Session>();
const port = parentPort!;

port.on('message', (request: CodingRequest) => {
  if (request.kind === 'open') {
    sessions.set(request.session, { codec: request.dataShards > 0 ? codecFor(defaultCodecId, request.dataShards, request.parityShards) : undefined, digests: new BodyDigests(request.algorithms, { md5: request.md5 }) });
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
    if (request.kind === 'digest') {
      session.digests.update(new Uint8Array(request.memory, 0, request.lengthBytes));
      reply({ id: request.id });
      return;
    }
    const codec = session.codec;
    if (!codec) throw new Error(`coding session ${request.session} only digests`);
    const { block, frames } = blockBufferViews(request.memory, request.blockSizeBytes, codec.dataShards, codec.dataShards + codec.parityShards);
    const data = block.subarray(0, request.lengthBytes);
    session.digests.update(data);
    codeBlockInto(codec, data, frames);
    reply({ id: request.id });
  } catch (error) {
    reply({ id: request.id, error: String(error instanceof Error ? error.message : error) });
  }
});

function reply(message: CodingReply): void {
  port.postMessage(message);
}
