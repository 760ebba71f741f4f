/** What the admin handlers are given by the composition root. */
import type { Readable } from 'node:stream';
import type { TargetStatus } from '../../ops/events/notifier.js';
import type { ReplicationAdmin } from '../../ops/replication/replicator.js';
import type { ListenFilter, ListenStats } from '../../ops/events/listen.js';
import type { DecommissionStatus } from '../../ops/decommission.js';
import type { RebalanceStatus } from '../../ops/rebalance.js';
import type { HealManager, HealPath, HealSequenceStatus } from '../../ops/heal.js';
import type { Explorer } from '../../ops/explorer.js';
import type { IamStore } from '../../ops/iam-store.js';
import type { LifecycleScanner } from '../../ops/lifecycle.js';
import type { Kms, KmsKeyStatus } from '../../ops/kms/kms.js';
import type { KmsRewrapStatus } from '../../contracts/kms.js';
import type { TierInfo } from '../../ops/tier/tier-document.js';
import type { TierInput } from '../../ops/tier/tiers.js';
import type { TierDeletionNodeRow, TierDeletionTotals } from '../../ops/tier/deletion-queue.js';
import type { UsageScanner } from '../../ops/usage-scanner.js';
import type { MetricsHistory } from '../../contracts/metrics-history.js';
import type { RouteSchema } from './route-schema.js';
import type { Capabilities, ClusterSnapshot, PoolInfo, SlotInfo } from '../../contracts/cluster.js';
import type { Permission, Principal } from '../../iam/index.js';

export type { PoolInfo, SlotInfo } from '../../contracts/cluster.js';

/** Decommission as the admin API sees it: local on the leader, forwarded elsewhere. */
export interface DecommissionControl {
  start(pools: number[]): Promise<DecommissionStatus[]>;
  cancel(pool: number): Promise<DecommissionStatus>;
  clear(pool: number): Promise<void>;
  status(pool?: number): Promise<DecommissionStatus[]>;
}

/** Rebalance as the admin API sees it: local on the leader, forwarded elsewhere. */
export interface RebalanceControl {
  start(): Promise<{ id: string }>;
  status(): Promise<RebalanceStatus>;
  stop(): Promise<RebalanceStatus>;
}

/** KMS key changes as the admin API sees them: a rotation and its re-wrap run by the leader, disabling on any node, each announced to every node. */
export interface KmsKeyControl {
  rotate(keyId: string): Promise<{ key: KmsKeyStatus; rewrap: KmsRewrapStatus }>;
  setEnabled(keyId: string, enabled: boolean): Promise<KmsKeyStatus>;
  rewrapStatus(): Promise<KmsRewrapStatus>;
  /**
   * Deletes a named key for good: KMSKeyInUse while a bucket's default encryption names it (even
   * with `force`), KMSKeyDeletionNotConfirmed without `force`; announced to every node.
   */
  deleteKey(keyId: string, force: boolean): Promise<{ keyId: string; deleted: true }>;
}

export interface AdminContext {
  /** Launch patterns in pool order. */
  poolPatterns: string[];
  pools(): Promise<PoolInfo[]>;
  slots(pool: number): Promise<SlotInfo[]>;
  decommission: DecommissionControl;
  rebalance: RebalanceControl;
  /** Heal sequences run on the node that received the request. */
  heal: Pick<HealManager, 'startSequence' | 'backgroundStatus' | 'replacementRecovery'>;
  /** A heal's status by client token (stopped first when `stop`), from whichever node runs it. */
  healSequence(clientToken: string, path: HealPath, stop: boolean): Promise<HealSequenceStatus>;
  /** This node's lifecycle scanner. */
  lifecycle: Pick<LifecycleScanner, 'status' | 'runNow'>;
  /** The last hour of metrics, this node's or the cluster's; undefined on a server built without them. */
  metricsHistory?(scope: 'node' | 'cluster'): Promise<MetricsHistory>;
  /** The data-usage scanner: the last result (from any node) and a scan started here. */
  usage: Pick<UsageScanner, 'status' | 'runNow'>;
  /** Set count of each pool. */
  setCounts: number[];
  snapshot(): Promise<ClusterSnapshot>;
  /** Fault control of this node's drives; undefined when SVC_FAULT_INJECTION is not on. */
  faults?: {
    list(): { drive: string; endpoint: string; faults: unknown }[];
    set(drive: string, plan: unknown): { drive: string; faults: unknown };
    /** How far this node's identity clock (session and web identity token expiry) runs ahead of the wall clock. */
    clock(): { offsetMs: number };
    setClock(offsetMs: number): { offsetMs: number };
  };
  /** Users, groups, service accounts and policies; undefined on a server built without them. */
  iam?: IamStore;
  capabilities(): Capabilities;
  /** Object placement and the failure what-if. */
  explorer: Explorer;
  serversInfo(): Promise<Record<string, unknown>>;
  nowMs(): number;
  /** The KMS (docs/encryption.md); undefined when SVC_KMS_SECRET_KEY is not set. */
  kms?: Kms;
  /** Rotation, disabling and the re-wrap's status; undefined without a KMS. */
  kmsKeys?: KmsKeyControl;
  /** This node's bucket notification targets and their queues, and its live listeners. */
  events?: {
    status(): TargetStatus[];
    /** A live listener's stream of newline-delimited JSON (ops/events/listen.ts); NoSuchBucket, InvalidArgument. */
    listen?(filter: ListenFilter): Promise<Readable>;
    listeners?(): ListenStats;
    /** Adds (or changes) a target configured through the API, on every node; InvalidArgument, EventTargetReadOnly. */
    addTarget?(input: { type: string; id: string; settings: Record<string, string>; queueLimit?: number }): Promise<TargetStatus>;
    /** Removes a target configured through the API, on every node; NoSuchEventTarget, EventTargetInUse, EventTargetReadOnly. */
    removeTarget?(arn: string): Promise<void>;
  };
  /** Bucket replication: remote targets, this node's queues and resyncs. */
  replication?: ReplicationAdmin;
  /** The deployment's remote tiers (lifecycle transitions). */
  tiers?: {
    list(): Promise<TierInfo[]>;
    info(name: string): Promise<TierInfo>;
    /** Every node's queue of tier objects waiting to be deleted on the tier (a node that did not answer listed as unreachable), and their sum. */
    deletions(name: string): Promise<{ deletions: TierDeletionTotals; nodes: TierDeletionNodeRow[] }>;
    add(input: TierInput): Promise<TierInfo>;
    /** TierInUse while a lifecycle rule or a transitioned version names it. */
    remove(name: string): Promise<void>;
  };
}

/**
 * One admin route. The form every route takes: `{ method, path, schema, handle }`, where `schema`
 * (required) declares the query, the body and the 200 answer with an example (route-schema.ts).
 */
export interface AdminRoute {
  method: 'GET' | 'POST';
  /** A fastify path: static, or with `:name` and `*` parameters. */
  path: string;
  schema: RouteSchema;
  /** What a caller must hold: checked before anything is read or changed (route-access.ts). */
  access: RouteAccess;
  /** `caller`: who the request acts for (routes about "the caller's own" read it). */
  handle(context: AdminContext, request: AdminRequest, caller: Principal): Promise<unknown>;
}

/**
 * The actions a route needs. `actions` are needed by every call (on the whole deployment);
 * `conditional` ones only by some calls, which `permissions` works out from the request and the
 * stored state (a user created with policies also needs the right to attach them; placement of
 * an object needs the right to read it), and `when` says in words for the reference.
 */
export interface RouteAccess {
  actions: readonly string[];
  conditional?: {
    actions: readonly string[];
    when: string;
    permissions(context: AdminContext, request: AdminRequest, caller: Principal): Permission[] | Promise<Permission[]>;
  };
}

/** An admin request as the handlers see it: the path and query as sent, and the (small) body. */
export interface AdminRequest {
  /** The path exactly as on the wire (percent-encoded). */
  rawPath: string;
  rawQuery: string;
  /** True when the URL had a `?`, even with nothing after it. */
  queryGiven: boolean;
  body: Buffer;
}
