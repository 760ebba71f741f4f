/**
 * Every limit of the service, in one place (sizes, queues, concurrency, retries).
 * Names carry their unit last.
 */
export const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;

export const limits = {
  /** Erasure block: objects are striped in blocks of this many bytes (SPEC "Limits"). */
  erasureBlockSizeBytes: 1 * MiB,
  /** Drives per erasure set. */
  minSetDriveCount: 2,
  maxSetDriveCount: 16,
  /** Inline budget: 256 KiB divided by K, capped per shard, divided on versioned buckets. */
  inlineBudgetTotalBytes: 256 * KiB,
  inlineShardCapBytes: 128 * KiB,
  inlineVersionedDivisor: 8,
  /** S3 limits. */
  maxObjectKeyBytes: 1024,
  /** A file or directory name on a drive (NAME_MAX of Linux file systems): bounds each encoded key segment. */
  maxDriveNameBytes: 255,
  maxPutObjectSizeBytes: 5 * GiB,
  minPartSizeBytes: 5 * MiB,
  maxPartSizeBytes: 5 * GiB,
  maxPartNumber: 10_000,
  maxListKeys: 1000,
  /** ListBuckets: the most buckets one page may hold (`max-buckets`). */
  maxListBuckets: 10_000,
  maxDeleteObjects: 1000,
  maxUserMetadataBytes: 2 * KiB,
  /** Object tags, as AWS limits them: 10 per object, keys of 1-128 and values of 0-256 characters. */
  maxObjectTags: 10,
  /** Tags on one bucket (PutBucketTagging). */
  maxBucketTags: 50,
  maxTagKeyChars: 128,
  maxTagValueChars: 256,
  /** POST Object (browser form upload): the fields before the file, and one part's headers. */
  maxFormFieldsBytes: 64 * KiB,
  maxFormPartHeaderBytes: 8 * KiB,
  /** A policy document (user or bucket policy), as AWS limits bucket policies. */
  maxPolicyBytes: 20 * KiB,
  /** Parsed bucket policies kept in memory per node (the cache starts over when full). */
  maxCachedBucketPolicies: 256,
  /** Service accounts one user may own. */
  maxServiceAccountsPerUser: 1_000,
  /** A session token longer than this is refused unread (a sealed session with its policy is well under it). */
  maxSessionTokenBytes: 16 * KiB,
  /** Opened session tokens each node keeps (cleared whole when full). */
  maxCachedSessionTokens: 4_096,
  /** STS: temporary credentials last 15 minutes to 12 hours (AWS's bounds); one hour when not asked. */
  stsMinDurationSeconds: 900,
  stsMaxDurationSeconds: 43_200,
  stsDefaultDurationSeconds: 3_600,
  /** STS: a session policy's JSON text (AWS's packed limit is about this size). */
  maxSessionPolicyBytes: 2_048,
  /** STS: a request's form body (a web identity token and a session policy fit well within it). */
  maxStsRequestBytes: 64 * KiB,
  /** STS: a web identity token (an OIDC ID token) longer than this is refused unread. */
  maxWebIdentityTokenBytes: 16 * KiB,
  /** STS: string claims a web identity session keeps for `jwt:<claim>` condition keys, and the longest value kept. */
  maxWebIdentityClaims: 16,
  maxWebIdentityClaimChars: 256,
  /** A node reloads users and policies from the drives this often (a peer's change notice is sooner). */
  iamReloadIntervalMs: 5_000,
  /** CORS rules of one bucket, as AWS limits them. */
  maxCorsRules: 100,
  /**
   * XML request bodies. DeleteObjects (1000 keys of up to 1 KiB, escaped, with version ids) and
   * CompleteMultipartUpload (10,000 parts with their ETags and checksums) fit in 2 MiB; bucket
   * configuration bodies (versioning, location) in 64 KiB. Larger: MaxMessageLengthExceeded.
   */
  maxXmlListBodyBytes: 2 * MiB,
  maxXmlConfigBodyBytes: 64 * KiB,
  /** A lifecycle configuration: 1000 rules (AWS's limit) of a few hundred bytes each. */
  maxLifecycleBodyBytes: 1 * MiB,
  maxLifecycleRules: 1_000,
  maxLifecycleRuleIdChars: 255,
  /** NewerNoncurrentVersions, as AWS bounds it. */
  maxNewerNoncurrentVersions: 100,
  /** Days in a lifecycle action (about 2,700 years; keeps every date far inside a JavaScript Date). */
  maxLifecycleDays: 1_000_000,
  /** The lifecycle scanner (SVC_LIFECYCLE_OBJECTS_PER_SECOND, SVC_LIFECYCLE_INTERVAL). */
  lifecycleObjectsPerSecondDefault: 1_000,
  lifecycleObjectsPerSecondMax: 1_000_000,
  lifecycleIntervalMsDefault: 60 * 60 * 1000,
  lifecycleIntervalMsMin: 1_000,
  /** How long a scan waits for a bucket's scan lock before leaving the bucket to the node that holds it. */
  lifecycleBucketLockTimeoutMs: 1_000,
  /** Errors a cycle's status keeps (the count goes on). */
  lifecycleErrorsKept: 10,
  /**
   * The data-usage scanner: keys a second it walks at most, the time from the end of a scheduled
   * scan to the start of the next, the wait after start before the first one (when no scan has
   * finished yet or one was left unfinished), and how often its checkpoint is saved (after this
   * many keys, or this long after the last save, whichever comes first).
   */
  usageScanObjectsPerSecond: 2_000,
  usageScanIntervalMs: 10 * 60 * 1000,
  usageScanFirstDelayMs: 5_000,
  usageCheckpointEveryKeys: 1_000,
  usageCheckpointIntervalMs: 5_000,
  /** How long a scan waits for the cluster-wide scan lock before leaving the scan to its holder. */
  usageScanLockTimeoutMs: 1_000,
  /** The in-process metrics history (the console's graphs): a sample every 10 s, an hour of them. */
  metricsHistoryIntervalMs: 10_000,
  metricsHistorySamples: 360,
  /** Buckets the usage metrics name one by one (the largest by bytes); the totals count every bucket. */
  usageMetricsBucketsMax: 100,
  /** Element nesting of an XML request body (S3's own documents nest a handful deep). */
  maxXmlDepth: 32,
  /**
   * Request timeouts (SVC_API_HEADERS_TIMEOUT, SVC_API_BODY_IDLE_TIMEOUT, SVC_API_REQUEST_TIMEOUT).
   * Headers must arrive within 30 s of the connection's first byte. A body may pause for 30 s at
   * most while the server waits for it (time spent writing to drives does not count). The whole
   * request (headers and body) must arrive within 2 h: a 5 GiB PUT, the largest single PUT, at
   * 1 MiB/s takes about 85 minutes; slower links should upload in parts.
   */
  requestHeadersTimeoutMsDefault: 30_000,
  requestBodyIdleTimeoutMsDefault: 30_000,
  requestTimeoutMsDefault: 2 * 3600_000,
  /** How often the listener looks for connections past their header or request timeout (at most). */
  connectionCheckIntervalMs: 5_000,
  /**
   * An error answered before the body was read to its end: up to this much more of the body is
   * read and dropped (in at most this long) so a client that sends its whole body before reading
   * still gets the answer; beyond, or once the client has sent nothing for the idle time (it is
   * waiting for the answer), the connection is closed.
   */
  errorBodyDrainBytes: 8 * MiB,
  errorBodyDrainMs: 10_000,
  errorBodyDrainIdleMs: 1_000,
  /**
   * Beyond that, the answer goes out with `connection: close` and a half-close; what the client
   * still sends is dropped until it stops (idle this long), for at most this long and this much,
   * so the close does not reset the connection under the answer.
   */
  closeLingerMs: 5_000,
  closeLingerIdleMs: 1_000,
  closeLingerBytes: 64 * MiB,
  /** Clock skew allowed on signed requests. */
  maxRequestSkewMs: 15 * 60 * 1000,
  maxPresignExpirySeconds: 7 * 24 * 3600,
  /** Console sign-in: failures an address may make before lockouts start, and the lockouts (doubling per further failure). */
  consoleFreeSignInFailures: 5,
  consoleSignInLockoutBaseMs: 2_000,
  consoleSignInLockoutMaxMs: 15 * 60 * 1000,
  /** A client address with no failed sign-in for this long starts afresh. */
  consoleSignInFailureWindowMs: 15 * 60 * 1000,
  /** Client addresses whose failed sign-ins are remembered at once. */
  consoleThrottledAddressesMax: 10_000,
  /** Console sessions: idle and absolute expiry defaults (SVC_CONSOLE_SESSION_IDLE, SVC_CONSOLE_SESSION_MAX). */
  consoleSessionIdleDefaultMs: 60 * 60 * 1000,
  consoleSessionMaxDefaultMs: 12 * 60 * 60 * 1000,
  /** Signed-out console sessions remembered by the node (until their absolute expiry). */
  consoleRevokedSessionsMax: 10_000,
  /** Console OpenID Connect sign-ins in progress on one node at most, and how long one may take. */
  consoleLoginStatesMax: 1_000,
  consoleLoginStateTtlMs: 10 * 60 * 1000,
  /** An unreachable OpenID provider is asked again at most this often. */
  consoleOpenIdRetryMs: 30_000,
  /** Discovery, token and key requests to the OpenID provider give up after this long. */
  consoleOpenIdTimeoutSeconds: 5,
  /** A user's console session may begin this far ahead of the signing-in node's clock (another node enabled the user by its own clock). */
  consoleClockSkewBridgedMs: 30_000,
  /** Policy names an SSO session takes from its policy claim at most (they travel in the session cookie). */
  consoleSsoPoliciesMax: 16,
  /** Console API bodies other than uploads (JSON) are at most this long. */
  consoleJsonBodyMaxBytes: 1 * MiB,
  /** Console object listing: entries per page at most. */
  consoleListPageMax: 1000,
  /** Console object listing: a folder's entries counted for its total, and sorted by size or date, at most. */
  consoleListSortMax: 10_000,
  /** Console batch delete: keys per request at most. */
  consoleDeleteBatchMax: 1000,
  /** Console prefix delete: keys handled per request (the browser asks again for the next batch). */
  consolePrefixDeleteBatchKeys: 200,
  /** Console sessions each node remembers (the sessions page), the least recently seen forgotten first. */
  consoleSessionsRememberedMax: 10_000,
  /** Console layout planner: launch patterns per request, and characters per pattern, at most. */
  consolePlanPatternsMax: 32,
  consolePlanPatternCharsMax: 1024,
  /** Derived SigV4 signing keys kept (one per access key, day, region and service in use). */
  signingKeyCacheEntries: 64,
  /** Erasure blocks of one PUT in flight at once: one received, one coded, one written. */
  codingBlocksInFlight: 3,
  /** Idle block buffers kept for reuse (each one block plus its N frames, 3 MiB at EC 2+2). */
  codingBuffersRetained: 16,
  /** Idle 1 MiB aligned staging buffers kept for O_DIRECT reads and writes (beyond, they are left to the garbage collector). */
  directIoBuffersRetained: 64,
  /** A shard file written with O_DIRECT is flushed in the background each time this much more is written. */
  directIoSyncIntervalBytes: 8 * MiB,
  /** Idle GET read buffers kept for reuse, in bytes. */
  readBuffersRetainedBytes: 64 * MiB,
  /** Idle internode buffers kept for reuse, in bytes: answers received on a stream, ranges a peer reads for an answer. */
  internodeBuffersRetainedBytes: 32 * MiB,
  /**
   * A GET reads the blocks of this many bytes of an object with one read per shard file (after
   * its first block, which is read alone so the first bytes go out soon), and reads the next
   * runs while one is sent: up to (1 + readRunsAhead) times this much is in memory per GET.
   */
  readRunBytes: 4 * MiB,
  /** Runs a GET reads ahead of the one it sends. */
  readRunsAhead: 1,
  /** Aligned staging buffer of an O_DIRECT read: a run's chunk of one shard file fits in one call. */
  directReadStagingBytes: 4 * MiB + 64 * KiB,
  /** Idle O_DIRECT read staging kept for reuse, in bytes over all staging sizes. */
  directReadStagingRetainedBytes: 32 * MiB,
  /** libuv threads for file-system calls when UV_THREADPOOL_SIZE is not set (src/cli/svc.ts). */
  ioThreadsDefault: 16,
  /** Threads that read whole small files (xl.meta) with synchronous calls, shared by every fs drive. */
  fileReadThreads: 2,
  /** Reads sent to one file-read thread at a time (in one message when asked for together). */
  fileReadThreadDepth: 8,
  /**
   * Reads that may wait for a file-read thread; beyond, they go through libuv's pool. Room for
   * 64 GETs at once on a set of 16 drives (16 xl.meta reads each): below that, a busy node's
   * reads spilled to the pool, three thread hand-offs a read (docs/benchmarks.md, "What was
   * measured, and kept or not"). A hung drive is still left behind by fileReadWaitMaxMs.
   */
  fileReadsQueuedMax: 1024,
  /** Once a read has waited this long for a file-read thread (a slow or hung drive), waiting reads go through libuv's pool. */
  fileReadWaitMaxMs: 100,
  /** Coding threads at most (SVC_CODING_THREADS). */
  maxCodingThreads: 64,
  /** Data movement (SVC_REBALANCE_MAX_ATTEMPTS, SVC_DECOMMISSION_BUCKET_CONCURRENCY, SVC_DECOMMISSION_ENTRY_CONCURRENCY). */
  rebalanceMaxAttemptsDefault: 3,
  decommissionBucketConcurrencyDefault: 4,
  decommissionEntryConcurrencyDefault: 8,
  decommissionEntryConcurrencyHardCap: 64,
  /** Pools over this fraction of used capacity take no new objects. */
  poolFullFraction: 0.85,
  /** Locks. */
  lockExpiryMs: 30_000,
  lockRefreshIntervalMs: 10_000,
  lockAcquireTimeoutMs: 10_000,
  /** A single node's in-process namespace lock waits this long by default before SlowDown. */
  localLockAcquireTimeoutMs: 30_000,
  /** A lock call asking for a longer expiry than this gets lockExpiryMs. */
  maxLockTtlMs: 10 * 60_000,
  /** Root-heal records larger than this are quarantined. */
  maxHealRecordBytes: 64 * KiB,
  /** A drive call unanswered this long fails; a drive none of whose calls answer that long goes offline (SVC_DRIVE_MAX_TIMEOUT; src/drive/deadline-drive.ts). */
  driveCallDeadlineMsDefault: 10_000,
  /** How often a drive taken offline for missing its deadline is asked whether it answers again. */
  driveProbeIntervalMs: 1_000,
  /**
   * A GET stops waiting for drives' xl.meta once the answers settle its vote; the drives still
   * silent get this long plus the time taken so far before the read goes on without them
   * (src/object/meta-io.ts, docs/erasure.md "Slow drives").
   */
  metaReadGraceFloorMs: 5,
  /**
   * Hedged shard reads (src/object/shard-hedge.ts, docs/erasure.md "Slow drives"): a GET asks K
   * shards of a block; when they have not all answered within the hedge delay, it asks one more
   * shard for each one still out, and decodes from the first K that verify. The delay is this
   * multiple of the set's typical recent shard-read latency (the lower median over its drives),
   * never below the floor nor above the ceiling.
   */
  shardReadHedgeLatencyMultiple: 3,
  shardReadHedgeFloorMs: 15,
  shardReadHedgeCeilingMs: 1_000,
  /**
   * A drive whose shard read was late is asked last (after parity) by the reads that follow;
   * once this long has passed since it was last asked, one read asks it in its turn again, and an
   * answer within the hedge delay puts it back in its place.
   */
  shardReadLateRetryMs: 1_000,
  /** Internode RPC: a drive call, a batch, or a peer control call unanswered this long fails (DriveOffline). */
  rpcTimeoutMs: 30_000,
  /** Drive operations one internode batch request carries at most (more wait for the next). */
  rpcBatchMaxOperations: 64,
  /** Payload bytes one internode batch request carries at most (a single larger operation goes alone). */
  rpcBatchMaxBytes: 8 * MiB,
  /**
   * Drive (and lock) batches to one peer out and unanswered at most; further operations wait for
   * an answer and then travel together (a single request never waits), for rpcBatchMaxWaitMs at
   * most. Lock releases never wait.
   */
  rpcBatchMaxInFlight: 1,
  rpcBatchMaxWaitMs: 4,
  /** Objects waiting for read-repair (MRF); more are dropped and counted. */
  mrfQueueLimit: 10_000,
  /**
   * An MRF heal that found some of the object's drives offline (a node down) is tried again after
   * this long, doubling each time up to the maximum, for at most this many attempts (about an hour
   * and a half in all); heal sequences cover what is still left then.
   */
  mrfRetryFirstDelayMs: 5_000,
  mrfRetryMaxDelayMs: 5 * 60_000,
  mrfRetryMaxAttempts: 20,
  /** Items a heal sequence keeps for its status. */
  healItemsKept: 1_000,
  /** Extra attempts of an internode read whose connection failed before any answer. */
  rpcReadRetries: 2,
  /** How often slots that were not online at startup are re-checked. */
  driveCheckIntervalMs: 2_000,
  /** How long a start with some drives not online re-reads formats before going ahead degraded. */
  formatSettleMs: 3_000,
  /** While formats settle, they are re-read this often; while format quorum is missing, this often, with a log line at most this often. */
  formatSettlePollMs: 250,
  formatPendingRetryMs: 500,
  formatPendingLogIntervalMs: 5_000,
  rpcTokenTtlMs: 15 * 60 * 1000,
  /** A sender signs a new internode token this often, not for every call (a token lives rpcTokenTtlMs). */
  rpcTokenReuseMs: 5_000,
  /** Checked tokens a stream's receiver remembers (a few per peer at any time). */
  rpcTokensRemembered: 256,
  /** Objects a failure what-if reads the stored geometry of, at most, for its scope count. */
  simulateScanMaxObjects: 10_000,
  /** Drives plus nodes one failure what-if may name. */
  simulateFailuresMax: 1_024,
  /** A metrics bearer token from `rc admin prometheus generate` is valid this long (about 100 years, as a scrape configuration is written once). */
  metricsTokenTtlMs: 100 * 365 * 24 * 60 * 60 * 1000,
  /** A drive that does not answer a metrics scrape's capacity question this fast is counted offline. */
  metricsDriveInfoTimeoutMs: 2_000,
  /** How long the cluster metrics view waits for a peer's view. */
  metricsPeerTimeoutMs: 5_000,
  /** Audit log (docs/audit.md): the entries each node keeps in memory for the console, newest last. */
  auditRecentEntries: 1_000,
  /** Entries the console's audit route answers when no limit is asked for. */
  auditConsoleLimitDefault: 100,
  /** Audit strings (resource, user agent, error code) are cut to this many characters. */
  auditFieldCharsMax: 2_048,
  /** The longest audit entry (one JSON line) the webhook queue takes; a segment line longer than this is not one it wrote. */
  auditEntryMaxBytes: 64 * 1024,
  /** The audit webhook's persisted queue: entries it holds by default and at most (SVC_AUDIT_WEBHOOK_QUEUE_LIMIT). */
  auditWebhookQueueLimitDefault: 100_000,
  auditWebhookQueueLimitMax: 10_000_000,
  /** Entries per webhook POST by default and at most (SVC_AUDIT_WEBHOOK_BATCH_SIZE); also the entries per queue segment file. */
  auditWebhookBatchSizeDefault: 100,
  auditWebhookBatchSizeMax: 10_000,
  /** A failed delivery is retried after 500 ms, doubling up to 30 s. */
  auditWebhookRetryBaseMs: 500,
  auditWebhookRetryMaxMs: 30_000,
  /** One webhook POST may take this long before it counts as failed. */
  auditWebhookTimeoutMs: 10_000,
  /** Audit writes (the file and the queue's segments) are fsynced this often: the window a power cut can lose. */
  auditFsyncIntervalMs: 1_000,
  /** Entries dropped from a full queue are logged at most this often, with their count. */
  auditDropWarningIntervalMs: 60_000,
  /** Failed writes to the audit file are logged at most this often. */
  auditWriteWarningIntervalMs: 60_000,
  /** Decommission and rebalance save their progress (pool.bin, rebalance.bin) at most this often while they run. */
  dataMovementProgressSaveIntervalMs: 2_000,
  /** Objects a decommission lists by name when it could not move them (the count goes on). */
  decommissionUnresolvedListed: 100,
  /** Rebalance: pool usage is measured again after this many bytes were moved. */
  rebalanceRemeasureEveryBytes: 8 * MiB,
  /** Rebalance: cleanup failures kept in its status (the count goes on). */
  rebalanceCleanupWarningsKept: 100,
  /** Peer notices: a pool.bin change (decommission progress), a rebalance event (the admission fence), a bucket or IAM change; each waits this long for each peer. */
  poolMetaNoticeTimeoutMs: 5_000,
  rebalanceEventTimeoutMs: 10_000,
  changeNoticeTimeoutMs: 2_000,
  /** A node that is not the leader rereads pool.bin and rebalance.bin this often, in case a notice was lost. */
  leaderFollowIntervalMs: 5_000,
  /** An admin API request body (JSON or a policy) read whole is at most this long. */
  maxAdminBodyBytes: 1 * MiB,
  /** A lock frame to a peer unanswered this long fails its calls (the peer grants nothing). */
  lockCallTimeoutMs: 5_000,
  /** A console session seen again after this long gets a fresh cookie (its idle expiry moves on). */
  consoleSessionRefreshAfterMs: 60_000,
  /** The part size of console uploads (the browser's and the server's; a 1 GiB file is 128 parts). */
  consoleUploadPartSizeBytes: 8 * MiB,
  /** Internode transport: a pooled stream not asked for in this long, with no call waiting, is closed at the next lookup. */
  internodeIdleStreamMs: 60_000,
  /**
   * Internode transport: a stream connection not open and upgraded in this long is given up, and
   * the next call tries again at once (after a cut heals, TCP would wait for its next resend of
   * the SYN, seconds to a minute later).
   */
  internodeConnectTimeoutMs: 5_000,
  /**
   * Internode transport: a call that runs out of time on a stream that has received nothing for
   * this long, and nothing since the call was sent, closes the stream; the next call opens a
   * fresh connection instead of waiting behind TCP's resends on the old one.
   */
  internodeStreamSilenceMs: 3_000,
  /** Internode transport: keep-alive sockets of plain internode requests to each peer at most. */
  internodeMaxSocketsPerPeer: 64,
  /** Internode transport: an answer larger than this breaks the stream that carries it. */
  internodeMaxAnswerBytes: 1 * GiB,
  /** Internode transport: a client stream's reused receive buffer. */
  internodeReceiveBufferBytes: 256 * KiB,
  /** aws-chunked bodies: a chunk header line (size and signature) longer than this is refused. */
  maxChunkHeaderLineBytes: 4 * KiB,
  /** Object lock: a retention period (default retention of a bucket) of at most this many days or years. */
  maxRetentionDays: 36_500,
  maxRetentionYears: 100,
  /** Reed-Solomon decode matrices kept per codec (one per pattern of missing shards in use). */
  decodeMatricesCached: 256,
  /** The event-loop delay metric samples the loop this often. */
  eventLoopSampleMs: 100,
  /**
   * A state file under .svc.sys (pool.bin, rebalance.bin, iam.bin) larger than this is quarantined
   * unread, and a save that would write one is refused (StateFileTooLarge).
   */
  maxStateFileBytes: 64 * MiB,
  /** `svc healthcheck` (the container's health probe) gives up after this long. */
  healthcheckTimeoutMs: 4_000,
  /** The persisted read-repair (MRF) queue: a file larger than this, or with more entries, is quarantined unread. */
  maxMrfFileBytes: 32 * MiB,
  maxMrfFileEntries: 20_000,
  /** The persisted storage-class settings (.svc.sys/config/storage-class.json). */
  maxStorageClassFileBytes: 4 * KiB,
  /**
   * Bucket notifications (docs/notifications.md): events each target's queue holds by default and
   * at most (each target's QUEUE_LIMIT setting, docs/notifications.md); full, a queue drops its oldest event and counts it.
   */
  eventQueueLimitDefault: 100_000,
  eventQueueLimitMax: 10_000_000,
  /** A failed delivery is retried after a backoff doubling from the base up to the cap. */
  eventRetryBaseMs: 250,
  eventRetryMaxMs: 10_000,
  /** One delivery to a target may take this long before it counts as failed and is retried. */
  eventSendTimeoutMs: 10_000,
  /** Dropped events are logged at most this often per target. */
  eventDropWarningIntervalMs: 60_000,
  /** Deliveries in flight to one target at most (events of one object still go one after another, in order). */
  eventDeliveriesInFlight: 8,
  /** Events one queue file holds at most (the events raised while the previous write was on the drive share the next); more wait for the write after. */
  eventQueueGroupEventsMax: 256,
  /** While a queue holds fewer events than this, the payloads it writes stay in memory for their delivery instead of being read back. */
  eventQueueKeptPayloadsMax: 1_024,
  /** Live listeners of a node's events at most. */
  eventWatchersMax: 64,
  /**
   * Live listeners across the cluster (`rc watch`, ops/events/listen.ts): bytes of events a
   * listener's stream holds for its reader, and events a peer holds for a listener between two
   * polls, before the listener is cut off; events one poll answers at most; how long a poll waits
   * for a first event; how long a peer keeps a subscription nobody polls; how soon a peer that did
   * not answer is polled again; how often an idle stream sends a blank line.
   */
  eventListenBufferBytes: 1 * MiB,
  eventListenRelayEvents: 10_000,
  eventListenPollBatch: 1_000,
  eventListenPollWaitMs: 5_000,
  eventListenLeaseMs: 30_000,
  eventListenRetryMs: 1_000,
  eventListenKeepAliveMs: 15_000,
  /** Every node rereads event-targets.bin (targets added through the admin API) this often, in case a change notice was lost. */
  eventTargetsReloadIntervalMs: 10_000,
  /** Server access logs: a node writes a log object per source bucket when its batch holds this many records, */
  accessLogFlushRecords: 10_000,
  /** ... or this many bytes of journal, */
  accessLogFlushBytes: 8 * MiB,
  /** ... or this long after the batch's first record (SVC_ACCESS_LOG_FLUSH_INTERVAL_MS). */
  accessLogFlushIntervalMsDefault: 60_000,
  /** Journal bytes a node keeps waiting for delivery; records beyond are dropped and counted. */
  accessLogMaxPendingBytes: 256 * MiB,
  /** A compressing PUT compresses this many 1 MiB blocks at once on the thread pool (docs/compression.md). */
  compressionBlocksInFlight: 2,
  /** Bucket replication (docs/replication.md): rules in one configuration at most (AWS's limit). */
  maxReplicationRules: 1000,
  /** Remote targets of the whole deployment at most. */
  maxReplicationTargets: 100,
  /** Replication tasks each remote target's queue holds on a node; full, the oldest is dropped and counted (a resync sends it again). */
  replicationQueueLimit: 1_000_000,
  /** A failed replication is retried after a backoff doubling from the base up to the cap. */
  replicationRetryBaseMs: 200,
  replicationRetryMaxMs: 5_000,
  /** One replication (the version's bytes to the target) may take this long before it counts as failed. */
  replicationSendTimeoutMs: 120_000,
  /** The check of a remote target when it is added (reachable, credentials, versioning) waits this long. */
  replicationTargetCheckTimeoutMs: 10_000,
  /** A node re-reads the stored remote targets this often (another node may have changed them). */
  replicationTargetsReloadMs: 5_000,
  /** A version up to this size is read whole before it is sent; a larger one is streamed. */
  replicationInMemoryMaxBytes: 16 * MiB,
  /** A resync lists this many versions per page and saves its progress after each. */
  replicationResyncPageSize: 500,
  /** A resync whose walk failed is tried again, from its last key, after a backoff doubling from the base up to the cap. */
  replicationResyncRetryBaseMs: 1_000,
  replicationResyncRetryMaxMs: 300_000,
  /** Remote tiers (lifecycle transitions): at most this many tiers, */
  maxTiers: 100,
  /** ... a connection to a tier must open within this long, */
  tierConnectTimeoutMs: 5_000,
  /** ... and each request to it must answer within this long (a read-through GET's first bytes included). */
  tierRequestTimeoutMs: 60_000,
  /** A tier object whose deletion failed (the tier unreachable) is tried again after a backoff from this long, */
  tierDeletionRetryBaseMs: 500,
  /** ... doubling up to this long, */
  tierDeletionRetryMaxMs: 30_000,
  /** ... and at most this many deletions wait per tier on a node (beyond, the oldest is dropped, counted and logged). */
  tierDeletionQueueMax: 100_000,
  /** SVC_TIER_MULTIPART_THRESHOLD may not be set below this (versions above it go to a tier in parts), */
  tierMultipartThresholdMinBytes: MiB,
  /** ... whose size is the object's size over this many parts, rounded up to a MiB, and at least the S3 minimum part size. */
  tierMultipartTargetParts: 10_000,
  /** An erasure set's restored-copy index (`restored.bin`) names at most this many restored copies (RestoreObject beyond it is SlowDown until some expire), */
  maxRestoredCopiesPerSet: 10_000,
  /** ... and a copy of the file larger than this is refused (quarantined; the set's index is then rebuilt by a walk). */
  maxRestoreIndexBytes: 16 * MiB,
  /** A state file's spread to the drives that lack its newest copy reads and writes at most this many times (a save elsewhere may race it). */
  stateFileSpreadRounds: 3,
} as const;
