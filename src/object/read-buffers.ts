/**
 * Buffers for the shard chunks a GET reads, reused instead of allocated per read (see
 * src/util/buffer-pool.ts): the reader holds a buffer from `acquire` until it is done with it,
 * each view it hands to a consumer carries a claim of its own (`lend`), and the consumer gives a
 * view back with `release` once the bytes are gone (the HTTP layer: when the socket has taken them).
 */
import { BufferPool } from '../util/buffer-pool.js';
import { limits } from '../util/limits.js';

export const readBuffers = new BufferPool(limits.readBuffersRetainedBytes);
