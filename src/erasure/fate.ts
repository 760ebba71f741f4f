/**
 * What a set of N drives storing K data + M parity shards can still do with some drives failed:
 * the quorum formulas of SPEC "Limits" with their numbers filled in, and the verdicts read, write
 * and delete give. Pure: the failure what-if and the placement report both use it.
 */
import { deleteQuorum, readQuorum, writeQuorum } from './geometry.js';

export interface QuorumRule {
  /** Drives (shards) that must answer. */
  needed: number;
  /** The SPEC formula, e.g. `K + 1 when K = M`. */
  formula: string;
  /** The formula with this geometry's numbers, e.g. `K=2, M=2: K + 1 = 3`. */
  worked: string;
}

export interface Quorums {
  read: QuorumRule;
  write: QuorumRule;
  delete: QuorumRule;
}

export function quorumsFor(setDriveCount: number, parityShards: number): Quorums {
  const dataShards = setDriveCount - parityShards;
  const geometry = `N=${setDriveCount}, K=${dataShards}, M=${parityShards}`;
  const read = readQuorum(dataShards, parityShards);
  const write = writeQuorum(dataShards, parityShards);
  const deletion = deleteQuorum(setDriveCount);
  return {
    read: { needed: read, formula: parityShards === 0 ? 'K = N (zero parity: every drive)' : 'K', worked: `${geometry}: ${read}` },
    write: {
      needed: write,
      formula: 'K, or K + 1 when K = M',
      worked: `${geometry}: ${dataShards === parityShards ? `K = M, so K + 1 = ${write}` : `K = ${write}`}`,
    },
    delete: { needed: deletion, formula: 'floor(N/2) + 1 (majority)', worked: `${geometry}: floor(${setDriveCount}/2) + 1 = ${deletion}` },
  };
}

export interface Fate {
  readable: boolean;
  writable: boolean;
  deletable: boolean;
  /** How many more drives may fail, beyond those failed, with the verdict still true (-1: already false). */
  moreFailuresTolerated: { read: number; write: number; delete: number };
}

/** The verdicts for a set of `setDriveCount` drives at `parityShards` with `failedDrives` of them failed. */
export function fateOf(setDriveCount: number, parityShards: number, failedDrives: number): Fate {
  const quorums = quorumsFor(setDriveCount, parityShards);
  const answering = setDriveCount - failedDrives;
  const slack = (needed: number) => (answering >= needed ? answering - needed : -1);
  const moreFailuresTolerated = { read: slack(quorums.read.needed), write: slack(quorums.write.needed), delete: slack(quorums.delete.needed) };
  return {
    readable: moreFailuresTolerated.read >= 0,
    writable: moreFailuresTolerated.write >= 0,
    deletable: moreFailuresTolerated.delete >= 0,
    moreFailuresTolerated,
  };
}
