/**
 * `rc du <alias>[/<bucket>] [--scan]`: objects, versions, delete markers and bytes per bucket, from
 * the data-usage scanner's last finished scan, with its age; `--scan` starts a scan first and waits
 * for it to end.
 */
import { RcError, formatBytes, table, type RcContext } from './context.js';
import { follow } from './admin.js';
import type { BucketUsage, UsageTotals } from '../../contracts/usage.js';

const base = '/svc/admin/v4/data-usage';

type BucketRow = BucketUsage;

export async function du(context: RcContext, target: string, scan: boolean): Promise<void> {
  const [aliasName, bucket, ...rest] = target.split('/');
  if (!aliasName || rest.some((part) => part !== '')) throw new RcError(`rc du takes <alias> or <alias>/<bucket>, not '${target}'`, 2);
  const alias = await context.alias(aliasName);
  const status = async () => context.admin(alias, 'GET', base);
  if (scan) await context.admin(alias, 'POST', `${base}/scan`);
  const answer = scan ? await follow(context, 'usage scan', status, (value) => value.current !== null, (value) => ({ done: Number(value.current?.bucketsDone ?? 0), total: Number(value.current?.bucketsTotal ?? 0) })) : await status();
  const last = answer.last as { finishedAt: string; buckets: BucketRow[]; total: UsageTotals } | null;
  if (bucket) {
    const row = last?.buckets.find((candidate) => candidate.bucket === bucket);
    if (last && !row) throw new RcError(`bucket '${bucket}' is not in the last data-usage scan (finished ${last.finishedAt}); it may be newer (rc du ${aliasName} --scan)`);
    const value = { ageSeconds: answer.ageSeconds, finishedAt: last?.finishedAt ?? null, usage: row ?? null, current: answer.current };
    context.print(value, () => describe(answer, row ? [row] : [], undefined));
    return;
  }
  context.print({ ageSeconds: answer.ageSeconds, finishedAt: last?.finishedAt ?? null, buckets: last?.buckets ?? [], total: last?.total ?? null, current: answer.current }, () => describe(answer, last?.buckets ?? [], last?.total));
}

function describe(answer: Record<string, any>, rows: BucketRow[], total: UsageTotals | undefined): string {
  const lines: string[] = [];
  if (!answer.last) lines.push('no data-usage scan has finished yet');
  else lines.push(`data usage as of ${answer.last.finishedAt} (${age(Number(answer.ageSeconds))} ago)`);
  if (answer.current) lines.push(`a scan is under way: ${answer.current.bucketsDone} of ${answer.current.bucketsTotal} buckets, ${answer.current.keysWalked} keys walked${answer.current.resumes > 0 ? `, resumed ${answer.current.resumes} time(s)` : ''}`);
  if (rows.length === 0 && !total) return lines.join('\n');
  const cells = (row: Omit<BucketRow, 'bucket'>) => [row.objects, row.versions, row.deleteMarkers, formatBytes(row.currentSizeBytes), formatBytes(row.sizeBytes)];
  const body = rows.map((row) => [row.bucket, ...cells(row)]);
  if (total) body.push([`TOTAL (${total.buckets} buckets)`, ...cells(total)]);
  lines.push(table(['BUCKET', 'OBJECTS', 'VERSIONS', 'DELETE MARKERS', 'CURRENT SIZE', 'ALL VERSIONS'], body));
  return lines.join('\n');
}

function age(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}
