/**
 * Erasure-read families: the shard reads a node's GETs asked beyond the K they need because a
 * shard was late (hedged reads), and the metadata reads of GETs that went on without a drive's
 * xl.meta answer (a drive still silent after the read's grace, or known late: its shards are then
 * not asked either, src/object/meta-io.ts and shard-hedge.ts). Read from the node's counts when
 * scraped.
 */
import { Counter, type Registry } from 'prom-client';
import { metricsPrefix } from './families.js';

export interface ErasureReadCounts {
  hedgedReads: number;
  metaReadsWithoutDrive: number;
}

export function registerErasureMetrics(registry: Registry, counts: () => ErasureReadCounts): void {
  new Counter({
    name: `${metricsPrefix}erasure_hedged_reads_total`,
    help: 'Shard reads GETs asked beyond the K a block needs because a shard had not answered within the hedge delay, since this node started.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(counts().hedgedReads);
    },
  });
  new Counter({
    name: `${metricsPrefix}erasure_meta_reads_without_drive_total`,
    help: "Metadata reads of GETs that went on without at least one drive's xl.meta answer (silent after the grace, or known late), since this node started.",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(counts().metaReadsWithoutDrive);
    },
  });
}
