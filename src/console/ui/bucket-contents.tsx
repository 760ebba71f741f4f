/** What deleting a bucket would remove, counted by the server (GET buckets/<bucket>/contents). */
import { api } from './api';
import { usePoll } from './components';

interface ContentsAnswer {
  objects: number;
  versions: number;
  deleteMarkers: number;
  capped: boolean;
  uploads: number | null;
}

export interface BucketContents {
  loading: boolean;
  answer: ContentsAnswer | undefined;
  /** Anything at all: a live object, an older version, a delete marker, an unfinished upload (or it could not be counted). */
  holdsAnything: boolean;
}

export function useBucketContents(bucket: string): BucketContents {
  const { data, error } = usePoll(() => api<ContentsAnswer>('GET', `buckets/${encodeURIComponent(bucket)}/contents`), 0, [bucket]);
  const loading = data === undefined && error === undefined;
  return { loading, answer: data, holdsAnything: data === undefined ? error !== undefined : data.versions > 0 || (data.uploads ?? 0) > 0 };
}

const plural = (count: number, one: string, many: string) => `${count.toLocaleString('en')} ${count === 1 ? one : many}`;

export function BucketDeleteSummary(props: { contents: BucketContents }) {
  const answer = props.contents.answer;
  if (!answer) return <p class="muted">What it holds could not be counted; everything in it is deleted.</p>;
  const older = answer.versions - answer.objects - answer.deleteMarkers;
  return (
    <ul class="key-list" data-testid="bucket-contents">
      <li>{plural(answer.objects, 'object', 'objects')}</li>
      <li>{plural(Math.max(0, older), 'older version', 'older versions')}</li>
      <li>{plural(answer.deleteMarkers, 'delete marker', 'delete markers')}</li>
      {answer.uploads !== null ? <li>{plural(answer.uploads, 'unfinished upload', 'unfinished uploads')}</li> : null}
      {answer.capped ? <li class="muted">and more (counting stopped at 10,000 versions)</li> : null}
    </ul>
  );
}
