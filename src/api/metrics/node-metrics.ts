/**
 * One node's metrics: the registry and its families, the observers the composition root hands
 * to drives and to the S3 listener, and the scrape (state read fresh, then rendered).
 */
import type { Drive } from '../../drive/index.js';
import { createNodeRegistry, statusClass, type MetricFamilies } from './families.js';
import { instrumentDrive } from './instrumented-drive.js';
import { StateCollector, type StateSources } from './state.js';

export class NodeMetrics {
  readonly registry;
  readonly families: MetricFamilies;
  private readonly collector: StateCollector;

  constructor(sources: StateSources) {
    const { registry, families } = createNodeRegistry();
    this.registry = registry;
    this.families = families;
    this.collector = new StateCollector(families, sources);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The text exposition of this node, its state read now. */
  async render(): Promise<string> {
    await this.collector.refresh();
    return this.registry.metrics();
  }

  /** A drive of this node: its operations feed the drive families. */
  instrumentLocalDrive<T extends Drive>(drive: T): T {
    const f = this.families;
    const label = drive.endpoint;
    return instrumentDrive(drive, {
      observe(operation, durationSeconds, outcome) {
        f.driveOperationDuration.observe({ drive: label, operation }, durationSeconds);
        if (outcome === 'error' || outcome === 'timeout') f.driveOperationErrors.inc({ drive: label, operation });
        if (outcome === 'timeout') f.driveTimeouts.inc({ drive: label });
      },
    });
  }

  /** A drive on a peer: its calls are internode RPC, counted by peer. */
  instrumentRemoteDrive<T extends Drive>(drive: T, peer: string): T {
    return instrumentDrive(drive, { observe: (_operation, durationSeconds, outcome) => this.observeInternodeCall(peer, durationSeconds, outcome === 'error' || outcome === 'timeout') });
  }

  /** One internode call (a remote drive's or a peer RPC) to `peer` (host:port). */
  observeInternodeCall(peer: string, durationSeconds: number, failed: boolean): void {
    const f = this.families;
    f.rpcCalls.inc({ peer });
    f.rpcDuration.observe({ peer }, durationSeconds);
    if (failed) f.rpcErrors.inc({ peer });
  }

  /** An internode request arrived for `service` (drive, lock, peer). */
  observeInternodeRequest(service: string): void {
    this.families.rpcReceived.inc({ service });
  }

  /** An S3 request began; the returned function is called once when its answer is finished. */
  s3RequestStarted(api: string): (status: number, receivedBytes: number, sentBytes: number) => void {
    const f = this.families;
    const startedAt = performance.now();
    f.s3InFlight.inc();
    return (status, receivedBytes, sentBytes) => {
      f.s3InFlight.dec();
      f.s3ReceivedBytes.inc({ api }, receivedBytes);
      f.s3Requests.inc({ api, status_class: statusClass(status) });
      f.s3RequestDuration.observe({ api }, (performance.now() - startedAt) / 1000);
      f.s3SentBytes.inc({ api }, sentBytes);
    };
  }
}
