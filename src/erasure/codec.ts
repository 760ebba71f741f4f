/**
 * The erasure codec interface. A codec is identified by a stable id that is recorded in every
 * xl.meta, so an object is always decoded by the math that encoded it.
 *
 * Shards are equal-length byte arrays, N = K + M of them: indexes 0..K-1 are data, K..N-1 parity.
 */
export interface ErasureCodec {
  /** Stable identity of the math (matrix construction and field), e.g. 'rs-vandermonde-gf8'. */
  readonly id: string;
  readonly dataShards: number;
  readonly parityShards: number;
  /** Computes parity shards K..N-1 in place from data shards 0..K-1. */
  encode(shards: Uint8Array[]): void;
  /**
   * Rebuilds every missing (null) shard in place from any K present ones; data shards only
   * when `dataOnly`. Fewer than K present shards throws ErasureReadQuorum.
   */
  reconstruct(shards: (Uint8Array | null)[], options?: { dataOnly?: boolean }): Uint8Array[];
}
