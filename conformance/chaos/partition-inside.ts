/**
 * The partition harness as it runs on the clients' host (partition.ts): reads its run from
 * SVC_CHAOS_PARTITION_RUN and prints the result as one line of JSON at the end.
 */
import { partitionInside, type InsideRun } from './partition.js';

const run = JSON.parse(process.env.SVC_CHAOS_PARTITION_RUN ?? 'null') as InsideRun | null;
if (!run) {
  console.error('partition-inside: SVC_CHAOS_PARTITION_RUN is not set (it is started by the partition scenarios)');
  process.exit(2);
}
try {
  const result = await partitionInside(run);
  console.log(JSON.stringify(result));
  process.exit(0);
} catch (error) {
  console.error(error);
  process.exit(1);
}
