/**
 * Folder actions of the object browser: create a folder (an empty `<name>/` object, as other
 * consoles make them), and delete a folder: what it holds is counted first (objects, and on a
 * versioned bucket its versions and delete markers), then it is deleted in batches with progress;
 * keys the session may not delete are reported by name and the rest go on.
 */
import { useState } from 'preact/hooks';
import { api, ApiError } from './api';
import { ConfirmDialog, ProgressBar, usePoll } from './components';
import { percent } from './format';

const bucketPath = (bucket: string, action: string) => `buckets/${encodeURIComponent(bucket)}/${action}`;

export function CreateFolderDialog(props: { bucket: string; prefix: string; onClose: () => void; onCreated: (folder: string) => void }) {
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const cleaned = name.trim().replace(/^\/+|\/+$/g, '');
  const problem = cleaned === '' ? undefined : cleaned.split('/').some((part) => part === '') ? 'A folder name has no empty part (no //).' : undefined;
  const create = async () => {
    if (cleaned === '' || problem) return;
    setBusy(true);
    setError(undefined);
    try {
      const folder = `${props.prefix}${cleaned}/`;
      await api('POST', bucketPath(props.bucket, 'folder'), { body: { key: folder } });
      props.onCreated(folder);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <ConfirmDialog title="Create a folder" confirmLabel="Create folder" busy={busy} disabled={cleaned === '' || problem !== undefined} error={error} onConfirm={create} onCancel={props.onClose}>
      <label class="field">
        <span>Folder name (in {props.prefix === '' ? 'the bucket' : props.prefix})</span>
        <input value={name} autoFocus spellcheck={false} autocomplete="off" aria-invalid={problem ? 'true' : 'false'} aria-describedby={problem ? 'folder-problem' : undefined} onInput={(event) => setName((event.target as HTMLInputElement).value)} />
      </label>
      {problem ? (
        <p class="field-error" id="folder-problem">
          {problem}
        </p>
      ) : null}
      <p class="muted small">The folder is an empty object named after it, ending with /.</p>
    </ConfirmDialog>
  );
}

interface Summary {
  versioning: 'unversioned' | 'enabled' | 'suspended';
  objects: number;
  versions: number | null;
  deleteMarkers: number | null;
  capped: boolean;
}

interface Batch {
  deleted: number;
  keys: number;
  refused: { key: string; Code: string; Message: string }[];
  failed: { key: string; versionId?: string; Code: string; Message: string }[];
  next?: string;
}

interface Progress {
  deleted: number;
  refused: Batch['refused'];
  failed: Batch['failed'];
  done: boolean;
}

const count = (value: number, capped: boolean) => `${value.toLocaleString('en')}${capped ? '+' : ''}`;

export function DeleteFolderDialog(props: { bucket: string; folder: string; onClose: () => void; onDeleted: () => void }) {
  const summary = usePoll(() => api<Summary>('GET', bucketPath(props.bucket, 'prefix-summary'), { query: { prefix: props.folder } }), 0, [props.bucket, props.folder]);
  const [allVersions, setAllVersions] = useState(false);
  const [progress, setProgress] = useState<Progress | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const facts = summary.data;
  const versioned = facts !== undefined && facts.versioning !== 'unversioned';
  const expected = facts ? (allVersions ? (facts.versions ?? facts.objects) : facts.objects) : 0;
  const run = async () => {
    let state: Progress = { deleted: 0, refused: [], failed: [], done: false };
    setProgress(state);
    setError(undefined);
    let after: string | undefined;
    try {
      do {
        const batch: Batch = await api<Batch>('POST', bucketPath(props.bucket, 'delete-prefix'), { body: { prefix: props.folder, allVersions, ...(after !== undefined ? { after } : {}) } });
        state = { deleted: state.deleted + batch.deleted, refused: [...state.refused, ...batch.refused], failed: [...state.failed, ...batch.failed], done: batch.next === undefined };
        setProgress(state);
        after = batch.next;
      } while (after !== undefined);
    } catch (caught) {
      setError(caught);
      setProgress({ ...state, done: true });
    }
  };
  const running = progress !== undefined && !progress.done;
  const finished = progress?.done === true;
  const left = (progress?.refused.length ?? 0) + (progress?.failed.length ?? 0);
  return (
    <ConfirmDialog
      title={`Delete the folder ${props.folder}?`}
      confirmLabel={finished ? 'Done' : allVersions ? 'Delete every version' : 'Delete folder'}
      danger={!finished}
      busy={running}
      disabled={!finished && (facts === undefined || summary.error !== undefined)}
      error={error ?? summary.error ?? (finished && left > 0 ? new ApiError(0, 'NotAllDeleted', `${left} key(s) or version(s) were not deleted: see the list.`) : undefined)}
      onConfirm={finished ? props.onDeleted : run}
      onCancel={finished ? props.onDeleted : props.onClose}
    >
      {facts === undefined && summary.error === undefined ? <p>Counting what the folder holds…</p> : null}
      {facts ? (
        <p data-testid="folder-count">
          It holds {count(facts.objects, facts.capped)} object(s)
          {versioned && facts.versions !== null ? `, ${count(facts.versions, facts.capped)} version(s) in all, ${count(facts.deleteMarkers ?? 0, facts.capped)} of them delete markers` : ''}.
          {versioned && !allVersions ? ' Each object gets a delete marker; its older versions stay.' : ''}
        </p>
      ) : null}
      {versioned && facts?.versions !== null && progress === undefined ? (
        <label class="check">
          <input type="checkbox" checked={allVersions} onChange={() => setAllVersions(!allVersions)} /> Also delete every version and delete marker, for good
        </label>
      ) : null}
      {progress ? (
        <div class="folder-progress">
          <ProgressBar value={finished ? 100 : percent(progress.deleted, expected || 1)} label={`Delete of ${props.folder}`} tone={finished ? (left > 0 ? 'warn' : 'ok') : undefined} />
          <p role="status" data-testid="folder-progress">
            {finished ? 'Finished: ' : 'Deleting… '}
            {progress.deleted.toLocaleString('en')} deleted
            {progress.refused.length > 0 ? `, ${progress.refused.length} refused` : ''}
            {progress.failed.length > 0 ? `, ${progress.failed.length} failed` : ''}.
          </p>
          {left > 0 ? (
            <ul class="key-list" aria-label="Not deleted">
              {[...progress.refused, ...progress.failed].slice(0, 20).map((item, index) => (
                <li key={index}>
                  <span class="mono break">{item.key}</span> <strong>{item.Code}</strong> <span class="muted small">{item.Message}</span>
                </li>
              ))}
              {left > 20 ? <li class="muted">and {left - 20} more</li> : null}
            </ul>
          ) : null}
        </div>
      ) : null}
    </ConfirmDialog>
  );
}
