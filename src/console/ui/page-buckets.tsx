/** Buckets: list, create (name errors shown by the field), versioning, delete (with confirmation). */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api';
import { Badge, Card, ConfirmDialog, Empty, ErrorNotice, usePoll, ActionsHead } from './components';
import { may, permissionReason, useBucketPermissions, useDeploymentPermissions } from './permissions';
import { when } from './format';
import { bucketUsageOf, UsageAge, UsageCells, UsageHead, useUsage } from './usage';

export interface BucketRow {
  name: string;
  createdAt: string;
  versioning: 'unversioned' | 'enabled' | 'suspended';
  objectLock: boolean;
}

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
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      await api('POST', 'buckets', { body: { name } });
      setName('');
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
          aria-invalid={error ? 'true' : 'false'}
          aria-describedby={error ? 'bucket-error' : undefined}
          onInput={(event) => setName((event.target as HTMLInputElement).value)}
          autocomplete="off"
          spellcheck={false}
        />
        {error ? (
          <span class="field-error" id="bucket-error" role="alert">
            {error.message}
          </span>
        ) : null}
      </label>
      <span class="guarded">
        <button class="button primary" type="submit" disabled={busy || name === '' || refused !== undefined} aria-describedby={refused ? 'create-bucket-why' : undefined}>
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
          <table class="table">
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
  if (permissions && !versioning && !deletable) return <span class="muted small">read only</span>;
  return (
    <>
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

/** Tries a plain delete; a bucket that still holds objects asks for its name to delete them too. */
function DeleteBucket(props: { bucket: BucketRow; onDone: () => void }) {
  const [notEmpty, setNotEmpty] = useState(false);
  const [busy, setBusy] = useState(true);
  // One dialog: a bucket seen to hold objects asks for its name at once (one that holds only
  // older versions or uploads learns it from the refused plain delete, in the same dialog).
  useEffect(() => {
    api<{ folders: string[]; objects: unknown[] }>('GET', `buckets/${encodeURIComponent(props.bucket.name)}/objects`, { query: { limit: '1' } }).then(
      (page) => setNotEmpty(page.folders.length + page.objects.length > 0),
      () => undefined,
    ).finally(() => setBusy(false));
  }, [props.bucket.name]);
  const [error, setError] = useState<unknown>(undefined);
  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await api('DELETE', `buckets/${encodeURIComponent(props.bucket.name)}`, { query: notEmpty ? { force: 'true', confirm: props.bucket.name } : {} });
      props.onDone();
    } catch (caught) {
      if ((caught as ApiError).code === 'BucketNotEmpty') setNotEmpty(true);
      else setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <ConfirmDialog
      title={notEmpty ? 'Delete the bucket and everything in it?' : 'Delete this bucket?'}
      confirmLabel={notEmpty ? 'Delete bucket and objects' : 'Delete bucket'}
      danger
      busy={busy}
      error={error}
      {...(notEmpty ? { typeToConfirm: props.bucket.name } : {})}
      onConfirm={confirm}
      onCancel={props.onDone}
    >
      {notEmpty ? (
        <p>
          <strong>{props.bucket.name}</strong> is not empty. Every object, every version and every unfinished upload in it will be deleted first. This cannot be undone.
        </p>
      ) : (
        <p>
          Delete the bucket <strong>{props.bucket.name}</strong>?
        </p>
      )}
    </ConfirmDialog>
  );
}
