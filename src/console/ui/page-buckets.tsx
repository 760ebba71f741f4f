/** Buckets: list, create (name errors shown by the field), versioning, delete (with confirmation). */
import { useState } from 'preact/hooks';
import { api, ApiError } from './api';
import { Badge, Card, ConfirmDialog, Empty, ErrorNotice, usePoll, ActionsHead } from './components';
import { may, permissionReason, useBucketPermissions, useDeploymentPermissions } from './permissions';
import { when } from './format';
import { bucketUsageOf, UsageAge, UsageCells, UsageHead, useUsage } from './usage';
import { bucketNameProblem } from '../../contracts/bucket-name';
import { BucketDeleteSummary, useBucketContents } from './bucket-contents';

export interface BucketRow {
  name: string;
  createdAt: string;
  versioning: 'unversioned' | 'enabled' | 'suspended';
  objectLock: boolean;
}

export const settingsHref = (bucket: string) => `#/settings/${encodeURIComponent(bucket)}`;

export const bucketHref = (bucket: string, prefix = '') => `#/browse/${encodeURIComponent(bucket)}${prefix ? `/${prefix.split('/').map(encodeURIComponent).join('/')}` : ''}`;

/** S3's answers to a create, in the console's words (the code stays for reference). */
function friendly(error: ApiError, name: string): ApiError {
  if (error.code === 'BucketAlreadyOwnedByYou') return new ApiError(error.status, error.code, `You already have a bucket named ${name}.`);
  if (error.code === 'BucketAlreadyExists') return new ApiError(error.status, error.code, `The name ${name} is taken: choose another.`);
  return error;
}

function CreateBucket(props: { onCreated: () => void }) {
  const permissions = useDeploymentPermissions();
  const refused = permissionReason(permissions, 'createBucket');
  const [name, setName] = useState('');
  const [objectLock, setObjectLock] = useState(false);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  // The server's own naming rule, judged as the name is typed (the server judges it again).
  const nameProblem = name === '' ? undefined : bucketNameProblem(name);
  const shownError = nameProblem !== undefined ? new ApiError(400, 'InvalidBucketName', nameProblem) : error;
  const submit = async (event: Event) => {
    event.preventDefault();
    if (nameProblem !== undefined) return;
    setBusy(true);
    try {
      await api('POST', 'buckets', { body: { name, ...(objectLock ? { objectLock } : {}) } });
      setName('');
      setObjectLock(false);
      setError(undefined);
      props.onCreated();
    } catch (caught) {
      setError(friendly(caught as ApiError, name));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="inline-form" onSubmit={submit} aria-label="Create a bucket">
      <label class="field grow">
        <span>New bucket name</span>
        <input
          name="bucket"
          value={name}
          placeholder="e.g. photos-2026"
          aria-invalid={shownError ? 'true' : 'false'}
          aria-describedby={shownError ? 'bucket-error' : undefined}
          onInput={(event) => {
            setName((event.target as HTMLInputElement).value);
            setError(undefined);
          }}
          autocomplete="off"
          spellcheck={false}
        />
        {shownError ? (
          <span class="field-error" id="bucket-error" role={nameProblem !== undefined ? undefined : 'alert'} aria-live="polite">
            {shownError.message}
          </span>
        ) : null}
      </label>
      <label class="check">
        <input type="checkbox" checked={objectLock} onChange={() => setObjectLock(!objectLock)} /> Object lock
      </label>
      <span class="guarded">
        <button class="button primary" type="submit" disabled={busy || name === '' || nameProblem !== undefined || refused !== undefined} aria-describedby={refused ? 'create-bucket-why' : nameProblem !== undefined ? 'bucket-error' : undefined}>
          Create bucket
        </button>
        {refused ? (
          <span class="reason" id="create-bucket-why">
            {refused}
          </span>
        ) : null}
      </span>
    </form>
  );
}

export function BucketsPage() {
  const { data, error, reload } = usePoll(() => api<{ buckets: BucketRow[] }>('GET', 'buckets'), 10_000);
  const [deleting, setDeleting] = useState<BucketRow | undefined>(undefined);
  const [actionError, setActionError] = useState<unknown>(undefined);
  const { usage, refused } = useUsage();
  const setVersioning = async (bucket: BucketRow, status: 'enabled' | 'suspended') => {
    try {
      await api('PUT', `buckets/${encodeURIComponent(bucket.name)}/versioning`, { body: { status } });
      reload();
    } catch (caught) {
      setActionError(caught);
    }
  };
  return (
    <div class="page">
      <h1>Buckets</h1>
      <Card title="Create a bucket">
        <CreateBucket onCreated={reload} />
      </Card>
      <ErrorNotice error={actionError ?? error} onClose={() => setActionError(undefined)} />
      <Card title={`All buckets${data ? ` (${data.buckets.length})` : ''}`}>
        {data && data.buckets.length === 0 ? <Empty>No buckets yet: create one above.</Empty> : null}
        {data && data.buckets.length > 0 ? (
          <table class="table buckets-table">
            <thead>
              <tr>
                <th>Name</th>
                <th class="hide-narrow">Created</th>
                <th>Versioning</th>
                <UsageHead shown={usage !== undefined} />
                <ActionsHead />
              </tr>
            </thead>
            <tbody>
              {data.buckets.map((bucket) => (
                <tr key={bucket.name}>
                  <td>
                    <a href={bucketHref(bucket.name)} class="strong">
                      {bucket.name}
                    </a>
                  </td>
                  <td class="hide-narrow nowrap">{when(bucket.createdAt)}</td>
                  <td>
                    <Badge state={bucket.versioning} />
                    {bucket.objectLock ? (
                      <span class="badge neutral lock-badge" title="Object lock: versions may be retained; versioning stays enabled">
                        object lock
                      </span>
                    ) : null}
                  </td>
                  <UsageCells shown={usage !== undefined} usage={bucketUsageOf(usage, bucket.name)} />
                  <td class="actions-col">
                    <BucketActions bucket={bucket} onVersioning={(status) => setVersioning(bucket, status)} onDelete={() => setDeleting(bucket)} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        {data && data.buckets.length > 0 ? <UsageAge usage={usage} refused={refused} /> : null}
      </Card>
      {deleting ? <DeleteBucket bucket={deleting} onDone={() => { setDeleting(undefined); reload(); }} /> : null}
    </div>
  );
}

/** A bucket's row actions, only those the session may take (asked of the server per bucket). */
function BucketActions(props: { bucket: BucketRow; onVersioning: (status: 'enabled' | 'suspended') => void; onDelete: () => void }) {
  const permissions = useBucketPermissions(props.bucket.name);
  const { bucket } = props;
  const versioning = may(permissions, 'putBucketVersioning').allowed;
  const deletable = may(permissions, 'deleteBucket').allowed;
  const settings = <a class="button small" href={settingsHref(bucket.name)} aria-label={`Settings of ${bucket.name}`}>Settings</a>;
  if (permissions && !versioning && !deletable) return <>{settings} <span class="muted small">read only</span></>;
  return (
    <>
      {settings}
      {versioning && bucket.versioning === 'enabled' && !bucket.objectLock ? (
        <button class="button small" type="button" onClick={() => props.onVersioning('suspended')}>
          Suspend versioning
        </button>
      ) : null}
      {versioning && bucket.versioning !== 'enabled' ? (
        <button class="button small" type="button" onClick={() => props.onVersioning('enabled')}>
          Enable versioning
        </button>
      ) : null}
      {deletable ? (
        <button class="button small danger" type="button" onClick={props.onDelete} aria-label={`Delete bucket ${bucket.name}`}>
          Delete
        </button>
      ) : null}
    </>
  );
}

/**
 * One confirmed step: what the bucket holds is counted first (objects, versions, delete markers,
 * unfinished uploads); a bucket holding anything asks for its name and the server empties it,
 * then deletes it.
 */
function DeleteBucket(props: { bucket: BucketRow; onDone: () => void }) {
  const contents = useBucketContents(props.bucket.name);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [forced, setForced] = useState(false);
  const notEmpty = forced || contents.holdsAnything;
  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await api('DELETE', `buckets/${encodeURIComponent(props.bucket.name)}`, { query: notEmpty ? { force: 'true', confirm: props.bucket.name } : {} });
      props.onDone();
    } catch (caught) {
      // Something was written since the count (or it could not be counted): the name is asked for.
      if ((caught as ApiError).code === 'BucketNotEmpty') setForced(true);
      else setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <ConfirmDialog
      title={notEmpty ? 'Delete the bucket and everything in it?' : 'Delete this bucket?'}
      confirmLabel={notEmpty ? 'Delete bucket and contents' : 'Delete bucket'}
      danger
      busy={busy || contents.loading}
      error={error}
      {...(notEmpty ? { typeToConfirm: props.bucket.name } : {})}
      onConfirm={confirm}
      onCancel={props.onDone}
    >
      {notEmpty ? (
        <>
          <p>
            <strong>{props.bucket.name}</strong> is not empty. Everything in it is deleted first, then the bucket. This cannot be undone.
          </p>
          <BucketDeleteSummary contents={contents} />
        </>
      ) : (
        <p>
          Delete the bucket <strong>{props.bucket.name}</strong>?{contents.loading ? ' Counting what it holds…' : ' It is empty.'}
        </p>
      )}
    </ConfirmDialog>
  );
}
