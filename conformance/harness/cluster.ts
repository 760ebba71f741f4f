/**
 * What a cluster scenario needs from a harness. The process cluster (child processes) and the
 * container cluster (testcontainers) both provide it, so a scenario is written once.
 */
export interface TestCluster {
  /** S3 endpoint of node i, e.g. http://127.0.0.2:9000. */
  readonly urls: string[];
  /** Starts node i again (same arguments, same drives) and waits until it is ready. */
  start(index: number): Promise<unknown>;
  /** SIGKILLs node i. */
  kill(index: number): Promise<void>;
  /** Every node's captured log, newest last, for a failing test's report. */
  logs(): string;
  destroy(): Promise<void>;
}

/** Runs a scenario step, attaching the cluster's logs to a failure. */
export async function withClusterLogs<T>(cluster: TestCluster, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    console.error(cluster.logs());
    throw error;
  }
}
