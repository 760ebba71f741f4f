/**
 * The metric families one node exposes (Prometheus text format, from prom-client). Every name
 * starts with `svc_` and ends with its unit; labels are bounded by the deployment's shape (API
 * names, status classes, drives, pools, sets, peers, fixed state names), never by an object key
 * or a client; the data-usage families name at most limits.usageMetricsBucketsMax buckets (usage-metrics.ts). Counters and histograms are fed as things happen (S3 requests, drive
 * operations, internode calls); the rest is read from the node's state when scraped (state.ts).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { limits } from '../../util/limits.js';

export const metricsPrefix = 'svc_';

export const latencyBucketsSeconds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Drive operations are many (per drive and operation): fewer, coarser buckets keep their series few. */
const driveBucketsSeconds = [0.0005, 0.002, 0.01, 0.05, 0.25, 1, 5];

/** The families, each registered in `registry`. Label names are listed here, once. */
export function createFamilies(registry: Registry) {
  const registers = [registry];
  const counter = (name: string, help: string, labelNames: string[] = []) => new Counter({ name: metricsPrefix + name, help, labelNames, registers });
  const gauge = (name: string, help: string, labelNames: string[] = []) => new Gauge({ name: metricsPrefix + name, help, labelNames, registers });
  const histogram = (name: string, help: string, labelNames: string[] = [], buckets = latencyBucketsSeconds) => new Histogram({ name: metricsPrefix + name, help, labelNames, buckets, registers });
  return {
    s3Requests: counter('s3_requests_total', 'S3 requests answered, by API and status class (2xx, 3xx, 4xx, 5xx).', ['api', 'status_class']),
    s3RequestDuration: histogram('s3_request_duration_seconds', 'Time from the request line to the last byte of the answer, by API.', ['api']),
    s3ReceivedBytes: counter('s3_received_bytes_total', 'Request body bytes received from S3 clients (the declared length, or what was read when undeclared), by API.', ['api']),
    s3SentBytes: counter('s3_sent_bytes_total', 'Bytes written to S3 clients for their answers (headers and bodies), by API.', ['api']),
    s3InFlight: gauge('s3_in_flight_requests', 'S3 requests being served now.'),

    driveOperationDuration: histogram('drive_operation_duration_seconds', 'Drive operations of this node, by drive and operation.', ['drive', 'operation'], driveBucketsSeconds),
    driveOperationErrors: counter('drive_operation_errors_total', 'Drive operations that failed (a missing file is an answer, not an error), by drive and operation.', ['drive', 'operation']),
    driveTimeouts: counter('drive_timeouts_total', 'Drive operations that timed out, by drive.', ['drive']),
    driveState: gauge('drive_state', 'One per drive of this node: 1 for its current state (online, offline, healing), 0 for the others.', ['drive', 'pool', 'set', 'state']),
    driveTotalBytes: gauge('drive_total_bytes', 'Capacity of a drive of this node.', ['drive']),
    driveUsedBytes: gauge('drive_used_bytes', 'Used bytes of a drive of this node.', ['drive']),
    driveFreeBytes: gauge('drive_free_bytes', 'Free bytes of a drive of this node.', ['drive']),
    driveHealObjectsHealed: gauge('drive_heal_healed_objects', 'Objects the background heal of a replaced drive has healed so far.', ['drive']),
    driveHealObjectsFailed: gauge('drive_heal_failed_objects', 'Objects the background heal of a replaced drive could not heal so far.', ['drive']),

    setDrives: gauge('set_drives', 'Drives in an erasure set.', ['pool', 'set']),
    setDrivesOnline: gauge('set_online_drives', 'Drives of an erasure set that answer, as this node sees them.', ['pool', 'set']),
    setReadQuorumDrives: gauge('set_read_quorum_drives', 'Drives an erasure set needs online to read (STANDARD class).', ['pool', 'set']),
    setWriteQuorumDrives: gauge('set_write_quorum_drives', 'Drives an erasure set needs online to write (STANDARD class).', ['pool', 'set']),
    setHealth: gauge('set_health_state', 'One per erasure set: 1 for its state (healthy: every drive online; degraded: write quorum holds; read_only: read quorum only; unavailable), 0 for the others.', ['pool', 'set', 'state']),

    poolTotalBytes: gauge('pool_total_bytes', 'Capacity of a pool (its online drives).', ['pool']),
    poolUsedBytes: gauge('pool_used_bytes', 'Used bytes of a pool (its online drives).', ['pool']),
    poolFreeBytes: gauge('pool_free_bytes', 'Free bytes of a pool (its online drives).', ['pool']),
    poolDecommissionState: gauge('pool_decommission_state', 'One per pool: 1 for its decommission state (none, queued, active, completed, failed, canceled).', ['pool', 'state']),
    poolDecommissionMovedObjects: gauge('pool_decommission_moved_objects', 'Objects moved off the pool by its latest decommission.', ['pool']),
    poolDecommissionMovedBytes: gauge('pool_decommission_moved_bytes', 'Bytes moved off the pool by its latest decommission.', ['pool']),
    poolDecommissionProgressRatio: gauge('pool_decommission_progress_ratio', 'Objects moved over objects found at the start of the latest decommission (0..1).', ['pool']),

    rebalanceState: gauge('rebalance_state', 'One per pool: 1 for its rebalance state (none, active, stopping, completed, stopped, failed).', ['pool', 'state']),
    rebalanceMovedObjects: gauge('rebalance_moved_objects', 'Objects the latest rebalance moved off the pool.', ['pool']),
    rebalanceMovedBytes: gauge('rebalance_moved_bytes', 'Bytes the latest rebalance moved off the pool.', ['pool']),
    rebalanceProgressRatio: gauge('rebalance_progress_ratio', 'Bytes moved over bytes to move of the latest rebalance (0..1).', ['pool']),

    healObjectsScanned: counter('heal_objects_scanned_total', 'Objects scanned by heal sequences run on this node (admin and background).'),
    healObjectsHealed: counter('heal_objects_healed_total', 'Objects heal sequences rebuilt.'),
    healObjectsFailed: counter('heal_objects_failed_total', 'Objects heal sequences could not heal (failures and unrecoverable objects).'),
    healShardsHealed: counter('heal_shards_healed_total', 'Shards heal sequences rewrote.'),
    healSequencesRunning: gauge('heal_running_sequences', 'Heal sequences running on this node.'),
    readRepairQueueLength: gauge('read_repair_queued_objects', 'Objects waiting in the read-repair (MRF) queue.'),
    readRepairDropped: counter('read_repair_dropped_total', 'Read-repair requests dropped because the queue was full.'),
    readRepairProcessed: counter('read_repair_processed_total', 'Read-repair requests processed.'),
    readRepairFailed: counter('read_repair_failed_total', 'Read-repair requests that failed.'),
    stateFilesQuarantined: counter('state_files_quarantined_total', 'State files under .svc.sys refused when read and moved to the quarantine directory.'),

    rpcCalls: counter('rpc_calls_total', 'Internode calls made to a peer (remote drive operations, lock exchanges and peer RPC).', ['peer']),
    rpcErrors: counter('rpc_errors_total', 'Internode calls to a peer that failed (unreachable, timed out, or a failed answer).', ['peer']),
    rpcDuration: histogram('rpc_call_duration_seconds', 'Internode call latency, by peer.', ['peer'], driveBucketsSeconds),
    rpcReceived: counter('rpc_received_requests_total', 'Internode requests and stream frames this node answered, by service (drive, lock, peer): each one a network round trip.', ['service']),

    usageBucketObjects: gauge('usage_bucket_objects', 'Objects (keys whose current version is not a delete marker) in a bucket, by the last data-usage scan; the largest buckets by bytes only.', ['bucket']),
    usageBucketVersions: gauge('usage_bucket_versions', 'Stored versions (delete markers apart) in a bucket, by the last data-usage scan.', ['bucket']),
    usageBucketDeleteMarkers: gauge('usage_bucket_delete_markers', 'Delete markers in a bucket, by the last data-usage scan.', ['bucket']),
    usageBucketBytes: gauge('usage_bucket_bytes', 'Bytes of every stored version in a bucket (client sizes), by the last data-usage scan.', ['bucket']),
    usageBuckets: gauge('usage_buckets', 'Buckets counted by the last data-usage scan.'),
    usageObjects: gauge('usage_objects', 'Objects in every bucket, by the last data-usage scan.'),
    usageVersions: gauge('usage_versions', 'Stored versions (delete markers apart) in every bucket, by the last data-usage scan.'),
    usageDeleteMarkers: gauge('usage_delete_markers', 'Delete markers in every bucket, by the last data-usage scan.'),
    usageBytes: gauge('usage_bytes', 'Bytes of every stored version in every bucket, by the last data-usage scan.'),
    usageScanAge: gauge('usage_scan_age_seconds', 'Seconds since the last data-usage scan finished.'),

    nodeUptime: gauge('node_uptime_seconds', 'Seconds since this node started.'),
    nodeInfo: gauge('node_info', 'Always 1; the labels carry the version.', ['version']),
  };
}

export type MetricFamilies = ReturnType<typeof createFamilies>;

/**
 * How often the event-loop delay is sampled. Each sample is a timer that wakes an idle process:
 * sampled every 20 ms, an idle node with 16 drives used 10.5 ms of CPU a second on a 2-core
 * machine; every 100 ms, 6.2 ms. A stall of the loop still shows in the percentiles.
 */

/** A registry with the families and the process metrics (memory, CPU, event-loop delay), all prefixed. */
export function createNodeRegistry(): { registry: Registry; families: MetricFamilies } {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: metricsPrefix, eventLoopMonitoringPrecision: limits.eventLoopSampleMs });
  renameTotalGauges(registry);
  return { registry, families: createFamilies(registry) };
}

/**
 * prom-client's process metrics include three gauges named like counters (`..._total`), which
 * Prometheus' lint refuses: each is replaced by the same count under a gauge's name
 * (`svc_nodejs_handles_active`, `svc_nodejs_requests_active`, `svc_nodejs_resources_active`).
 * The labelled gauges beside them (by handle or resource type) stay as they are.
 */
function renameTotalGauges(registry: Registry): void {
  const hidden = process as unknown as { _getActiveHandles?: () => unknown[]; _getActiveRequests?: () => unknown[] };
  const counts: [name: string, replaced: string, help: string, count: () => number][] = [
    ['nodejs_handles_active', 'nodejs_active_handles_total', 'Active libuv handles (sockets, timers, servers, ...).', () => hidden._getActiveHandles?.().length ?? 0],
    ['nodejs_requests_active', 'nodejs_active_requests_total', 'Active libuv requests (file system calls, DNS lookups, ...).', () => hidden._getActiveRequests?.().length ?? 0],
    ['nodejs_resources_active', 'nodejs_active_resources_total', 'Resources keeping the event loop alive.', () => process.getActiveResourcesInfo().length],
  ];
  for (const [name, replaced, help, count] of counts) {
    registry.removeSingleMetric(`${metricsPrefix}${replaced}`);
    new Gauge({
      name: `${metricsPrefix}${name}`,
      help,
      registers: [registry],
      collect() {
        this.set(count());
      },
    });
  }
}

/** 2xx, 3xx, 4xx or 5xx: the only status labels, so the series stay bounded. */
export function statusClass(status: number): string {
  return `${Math.min(5, Math.max(1, Math.floor(status / 100)))}xx`;
}
