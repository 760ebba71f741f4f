/**
 * Erasure-read families: the shard reads a node's GETs asked beyond the K they need because a
 * shard was late (hedged reads, src/object/shard-hedge.ts). Read from the node's counts when
 * scraped.
 */
import { Counter, type Registry } from 'prom-client';
import { metricsPrefix } from './families.js';

export function registerErasureMetrics(registry: Registry, hedgedReads: () => number): void {
  new Counter({
    name: `${metricsPrefix}erasure_hedged_reads_total`,
    help: 'Shard reads GETs asked beyond the K a block needs because a shard had not answered within the hedge delay, since this node started.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(hedgedReads());
    },
  });
}
