/**
 * Data usage in the console: per-bucket object counts and sizes in the bucket list and the totals
 * on Overview, from the data-usage scanner's last finished scan (the admin route, run in-process),
 * always with the scan's age. Shown only to a session allowed admin:DataUsageInfo; others see why.
 */
import { api } from './api';
import { Stat, usePoll } from './components';
import { bytes } from './format';
import { may, useDeploymentPermissions } from './permissions';
import type { BucketUsage, UsageStatus } from '../../contracts/usage';

/** The scan's result changes every few minutes at most: once a minute is plenty. */
export const usageIntervalMs = 60_000;

/** The scanner's answer, or undefined while unknown or not allowed (`refused` then says why). */
export function useUsage(): { usage: UsageStatus | undefined; refused: string | undefined } {
  const judgement = may(useDeploymentPermissions(), 'dataUsageInfo');
  const poll = usePoll(() => (judgement.allowed ? api<UsageStatus>('GET', 'admin/v4/data-usage', { quietSignOut: true }) : Promise.resolve(undefined)), usageIntervalMs, [judgement.allowed]);
  return { usage: poll.data, refused: judgement.allowed ? undefined : judgement.reason };
}

export function ageText(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return 'never';
  if (seconds < 90) return `${seconds} s ago`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86_400)} days ago`;
}

/** One line saying how old the figures are (and that a scan runs), for a card's foot. */
export function UsageAge(props: { usage: UsageStatus | undefined; refused: string | undefined }) {
  const { usage, refused } = props;
  if (refused) return <p class="muted small usage-age">Sizes and object counts are not shown: {refused}</p>;
  if (!usage) return null;
  const scanning = usage.current ? ` A scan is under way (${usage.current.bucketsDone} of ${usage.current.bucketsTotal} buckets).` : '';
  const text = usage.last ? `Sizes and object counts from the data-usage scan that finished ${ageText(usage.ageSeconds)}.` : 'No data-usage scan has finished yet.';
  return (
    <p class="muted small usage-age" data-testid="usage-age">
      {text}
      {scanning}
    </p>
  );
}

export function bucketUsageOf(usage: UsageStatus | undefined, bucket: string): BucketUsage | undefined {
  return usage?.last?.buckets.find((row) => row.bucket === bucket);
}

/** Header cells of the bucket list's usage columns (none when usage is not shown). */
export function UsageHead(props: { shown: boolean }) {
  if (!props.shown) return null;
  return (
    <>
      <th class="num hide-narrow">Objects</th>
      <th class="num hide-narrow">Size</th>
    </>
  );
}

/** A bucket's usage cells: its objects (versions and delete markers beside), its current and all-version bytes (not on a phone, where the row keeps its actions in view: Overview has the totals). */
export function UsageCells(props: { shown: boolean; usage: BucketUsage | undefined }) {
  if (!props.shown) return null;
  const row = props.usage;
  if (!row) {
    return (
      <>
        <td class="num muted hide-narrow" title="Not in the last scan (a newer bucket?)">–</td>
        <td class="num muted hide-narrow">–</td>
      </>
    );
  }
  const older = row.versions - row.objects;
  return (
    <>
      <td class="num nowrap hide-narrow">
        {row.objects.toLocaleString()}
        {older > 0 || row.deleteMarkers > 0 ? (
          <span class="muted small block">
            {older > 0 ? `+${older.toLocaleString()} older` : ''}
            {older > 0 && row.deleteMarkers > 0 ? ' · ' : ''}
            {row.deleteMarkers > 0 ? `${row.deleteMarkers.toLocaleString()} deleted` : ''}
          </span>
        ) : null}
      </td>
      <td class="num nowrap hide-narrow">
        {bytes(row.currentSizeBytes)}
        {row.sizeBytes > row.currentSizeBytes ? <span class="muted small block">{bytes(row.sizeBytes)} with versions</span> : null}
      </td>
    </>
  );
}

/** Overview's usage figures: buckets, objects and stored bytes, with the scan's age. */
export function UsageStats() {
  const { usage, refused } = useUsage();
  if (refused) return null;
  const total = usage?.last?.total;
  const age = `scanned ${ageText(usage?.ageSeconds)}`;
  return (
    <>
      <Stat label="Buckets" value={total ? total.buckets.toLocaleString() : '–'} hint={age} />
      <Stat label="Objects" value={total ? total.objects.toLocaleString() : '–'} hint={total ? `${total.versions.toLocaleString()} versions · ${total.deleteMarkers.toLocaleString()} delete marker${total.deleteMarkers === 1 ? '' : 's'}` : age} />
      <Stat label="Stored data" value={total ? bytes(total.sizeBytes) : '–'} hint={total ? `${bytes(total.currentSizeBytes)} in current versions · ${age}` : age} />
    </>
  );
}
