/**
 * What the object layer needs of remote tiers (src/ops/tier/ implements it): the stored bytes of
 * a transitioned version read back from its tier, and the tier's object freed once no version
 * names it any more. The object layer never reaches a tier any other way.
 */
import type { TransitionInfo } from '../format/xl-meta-types.js';

export interface TierGateway {
  /**
   * The stored bytes [offset, offset + length) of a transitioned version, from its tier. Resolves
   * once the tier answered (a tier that cannot be reached fails here, with a named error, before
   * anything was sent to the client).
   */
  open(transition: TransitionInfo, range: { offset: number; length: number }): Promise<AsyncIterable<Uint8Array>>;
  /**
   * A version that named this tier object was removed or replaced: the tier's object goes (at
   * once, or later when the tier cannot be reached now). Never throws.
   */
  release(transition: TransitionInfo): void;
}

/**
 * Where an erasure set notes its restored copies (RestoreObject), so that their end needs no walk
 * of the keys (src/ops/tier/restore-index.ts implements it).
 */
export interface RestoredCopyRecorder {
  /**
   * Notes that the set holds, or is about to hold, a restored copy of this version until
   * `expiryMs`. Resolves once the note is durable; throws (and the restore is refused) when it
   * cannot be made.
   */
  record(copy: { bucket: string; key: string; versionId: string; expiryMs: number }): Promise<void>;
}

/** Does this version have its bytes on the drives (never transitioned, or restored)? */
export function hasLocalData(version: { transition?: TransitionInfo; dataDir?: string; inlineData?: Uint8Array }): boolean {
  return version.transition === undefined || version.dataDir !== undefined || version.inlineData !== undefined;
}
