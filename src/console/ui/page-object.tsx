/** One object's details: its versions and delete markers, metadata, downloads and share links. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, apiUrl, ApiError } from './api';
import { may, useBucketPermissions } from './permissions';
import { Badge, ConfirmDialog, ErrorNotice, usePoll } from './components';
import { bytes, when } from './format';
import { explorerHash } from './page-explorer';
import { CopyButton } from './copy';
import { Preview } from './preview';
import { MetadataDialog, RestoreDialog, TagsDialog } from './object-actions';

export interface ObjectVersion {
  key: string;
  versionId: string;
  isLatest: boolean;
  deleteMarker: boolean;
  sizeBytes: number;
  etag: string;
  lastModified: string;
  storageClass: string;
  contentType: string | null;
  userMetadata: Record<string, string>;
  tags: { key: string; value: string }[];
  headers: Record<string, string>;
  lock: { legalHold: boolean; mode?: 'GOVERNANCE' | 'COMPLIANCE'; retainUntil?: string };
  encryption?: { type: 'SSE-S3' | 'SSE-KMS' | 'SSE-C'; kmsKeyId?: string };
  compression?: { algorithm: string; storedSizeBytes: number };
}

/** A compressed version in words: the drives hold its compressed stream, not the client's bytes. */
export function compressionText(version: ObjectVersion): string | undefined {
  if (!version.compression) return undefined;
  return `Compressed (zstd), stored ${bytes(version.compression.storedSizeBytes)} of ${bytes(version.sizeBytes)}`;
}

/** A version's object lock in words, or undefined when it has none. */
export function lockText(lock: ObjectVersion['lock']): string | undefined {
  const parts: string[] = [];
  if (lock.mode && lock.retainUntil) parts.push(`${lock.mode} retention until ${when(lock.retainUntil)}`);
  if (lock.legalHold) parts.push('legal hold');
  return parts.length > 0 ? parts.join(' · ') : undefined;
}

/** A version's server-side encryption in words (what HEAD's x-amz-server-side-encryption headers say). */
export function encryptionText(encryption: ObjectVersion['encryption']): string {
  if (!encryption) return 'none';
  if (encryption.type === 'SSE-KMS') return `SSE-KMS (aws:kms), key ${encryption.kmsKeyId ?? 'default'}`;
  if (encryption.type === 'SSE-S3') return 'SSE-S3 (AES256)';
  return 'SSE-C (customer-provided key)';
}

interface Details {
  bucket: string;
  key: string;
  versioning: string;
  versions: ObjectVersion[];
}

const expiries = [
  { label: '1 hour', seconds: 3600 },
  { label: '1 day', seconds: 86_400 },
  { label: '7 days', seconds: 604_800 },
];

export function ObjectDetails(props: { bucket: string; objectKey: string; onClose: () => void; onChanged: () => void }) {
  const { data, error, reload } = usePoll(() => api<Details>('GET', `buckets/${encodeURIComponent(props.bucket)}/object`, { query: { key: props.objectKey } }), 0, [props.bucket, props.objectKey]);
  const [deleting, setDeleting] = useState<ObjectVersion | undefined>(undefined);
  const [actionError, setActionError] = useState<unknown>(undefined);
  const [deleteError, setDeleteError] = useState<unknown>(undefined);
  const permissions = useBucketPermissions(props.bucket, props.objectKey);
  const mayDeleteVersion = may(permissions, 'deleteObjectVersion').allowed;
  const mayRestore = may(permissions, 'getObjectVersion').allowed && may(permissions, 'putObject').allowed;
  const mayTag = may(permissions, 'putObjectTagging').allowed;
  const mayEditMetadata = may(permissions, 'getObject').allowed && may(permissions, 'putObject').allowed;
  const [editing, setEditing] = useState<'tags' | 'metadata' | undefined>(undefined);
  const [restoring, setRestoring] = useState<ObjectVersion | undefined>(undefined);
  const changed = () => {
    setEditing(undefined);
    setRestoring(undefined);
    reload();
    props.onChanged();
  };
  // The details take the focus when they open (on a phone they cover the list).
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [props.objectKey]);
  const latest = data?.versions.find((version) => !version.deleteMarker && version.isLatest);
  const deleteVersion = async () => {
    if (!deleting) return;
    setDeleteError(undefined);
    try {
      // The answer lists each key's outcome: a version that stays (locked, say) is an error there, not a failed call.
      const answer = await api<{ results: { key: string; error?: { Code: string; Message: string } }[] }>('POST', `buckets/${encodeURIComponent(props.bucket)}/delete`, { body: { objects: [{ key: props.objectKey, versionId: deleting.versionId }] } });
      const failed = answer.results.find((result) => result.error)?.error;
      if (failed) {
        setDeleteError(new ApiError(0, failed.Code, `The version was not deleted: ${failed.Message}`));
        return;
      }
      setDeleting(undefined);
      reload();
      props.onChanged();
    } catch (caught) {
      setDeleteError(caught);
    }
  };
  const cancelDelete = () => {
    setDeleting(undefined);
    setDeleteError(undefined);
  };
  return (
    <aside class="card details" aria-label="Object details">
      <header class="card-head">
        <h2 class="truncate" title={props.objectKey} ref={heading} tabIndex={-1}>
          {props.objectKey.split('/').filter(Boolean).at(-1)}
        </h2>
        <button class="button small" type="button" onClick={props.onClose} aria-label="Close details">
          Close
        </button>
      </header>
      <ErrorNotice error={actionError ?? error} onClose={() => setActionError(undefined)} />
      {data ? (
        <>
          <dl class="facts">
            <dt>
              Key <CopyButton value={data.key} what="key" />
            </dt>
            <dd class="mono break">{data.key}</dd>
            {latest ? (
              <>
                <dt>Size</dt>
                <dd>{bytes(latest.sizeBytes)}</dd>
                <dt>
                  ETag <CopyButton value={latest.etag} what="ETag" />
                </dt>
                <dd class="mono break">{latest.etag}</dd>
                <dt>Last modified</dt>
                <dd>{when(latest.lastModified)}</dd>
                <dt>Storage class</dt>
                <dd>{latest.storageClass}</dd>
                <dt>Content type</dt>
                <dd>{latest.contentType ?? '–'}</dd>
                <dt>Encryption</dt>
                <dd data-testid="object-encryption">{encryptionText(latest.encryption)}</dd>
              </>
            ) : (
              <>
                <dt>State</dt>
                <dd>
                  <Badge state="deleted" /> the latest version is a delete marker
                </dd>
              </>
            )}
            {latest && compressionText(latest) ? (
              <>
                <dt>Compression</dt>
                <dd data-testid="object-compression">{compressionText(latest)}</dd>
              </>
            ) : null}
            {latest && lockText(latest.lock) ? (
              <>
                <dt>Object lock</dt>
                <dd data-testid="object-lock">{lockText(latest.lock)}</dd>
              </>
            ) : null}
            {latest
              ? Object.entries(latest.headers).map(([name, value]) => (
                  <>
                    <dt key={`h-${name}`} class="header-name">{name}</dt>
                    <dd key={`v-${name}`} class="mono break">
                      {value}
                    </dd>
                  </>
                ))
              : null}
            {latest ? (
              <>
                <dt>Tags</dt>
                <dd data-testid="object-tags">
                  {latest.tags.length === 0 ? (
                    <span class="muted">none</span>
                  ) : (
                    latest.tags.map((tag) => (
                      <span key={tag.key} class="badge neutral tag">
                        {tag.key}={tag.value}
                      </span>
                    ))
                  )}
                </dd>
              </>
            ) : null}
            {latest && Object.keys(latest.userMetadata).length > 0 ? (
              <>
                <dt>Metadata</dt>
                <dd>
                  {Object.entries(latest.userMetadata).map(([name, value]) => (
                    <div key={name} class="mono break">
                      {name}: {value}
                    </div>
                  ))}
                </dd>
              </>
            ) : null}
          </dl>
          {latest ? (
            <p class="object-actions">
              <a class="button small" href={explorerHash(props.bucket, props.objectKey)}>
                Show placement
              </a>
              {mayTag ? (
                <button class="button small" type="button" onClick={() => setEditing('tags')}>
                  Edit tags
                </button>
              ) : null}
              {mayEditMetadata && !latest.encryption?.type.startsWith('SSE-C') ? (
                <button class="button small" type="button" onClick={() => setEditing('metadata')}>
                  Edit metadata
                </button>
              ) : null}
            </p>
          ) : null}
          {latest ? <Preview bucket={props.bucket} objectKey={props.objectKey} version={latest} /> : null}
          {latest ? <Share bucket={props.bucket} objectKey={props.objectKey} /> : null}
          <h3>Versions ({data.versions.length})</h3>
          <ul class="versions">
            {data.versions.map((version) => (
              <li key={version.versionId} class="version" data-delete-marker={version.deleteMarker ? 'true' : 'false'}>
                <div class="version-head">
                  <span class="mono small break">{version.versionId}</span>
                  {version.isLatest ? <Badge state="latest" /> : null}
                  {version.deleteMarker ? <Badge state="delete marker" /> : null}
                </div>
                <div class="muted small">
                  {when(version.lastModified)}
                  {version.deleteMarker ? '' : ` · ${bytes(version.sizeBytes)}`}
                </div>
                {lockText(version.lock) ? <div class="small lock-line">Locked: {lockText(version.lock)}</div> : null}
                <div class="version-actions">
                  {version.deleteMarker ? null : (
                    <a class="button small" href={apiUrl(`buckets/${encodeURIComponent(props.bucket)}/download`, { key: props.objectKey, versionId: data.versioning === 'unversioned' ? undefined : version.versionId })} download>
                      Download
                    </a>
                  )}
                  {mayRestore && !version.isLatest && !version.deleteMarker ? (
                    <button class="button small" type="button" onClick={() => setRestoring(version)} aria-label={`Restore version ${version.versionId} as the latest`}>
                      Restore
                    </button>
                  ) : null}
                  {mayDeleteVersion ? (
                    <button class="button small danger" type="button" onClick={() => setDeleting(version)}>
                      {version.deleteMarker ? 'Remove marker' : 'Delete version'}
                    </button>
                  ) : null}
                </div>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {editing === 'tags' && latest ? <TagsDialog bucket={props.bucket} version={latest} onClose={() => setEditing(undefined)} onSaved={changed} /> : null}
      {editing === 'metadata' && latest ? <MetadataDialog bucket={props.bucket} version={latest} versioned={data?.versioning === 'enabled'} onClose={() => setEditing(undefined)} onSaved={changed} /> : null}
      {restoring ? <RestoreDialog bucket={props.bucket} version={restoring} onClose={() => setRestoring(undefined)} onRestored={changed} /> : null}
      {deleting ? (
        <ConfirmDialog title={deleting.deleteMarker ? 'Remove this delete marker?' : 'Delete this version for good?'} confirmLabel="Delete" danger error={deleteError} onConfirm={deleteVersion} onCancel={cancelDelete}>
          <p class="mono break">{deleting.versionId}</p>
        </ConfirmDialog>
      ) : null}
    </aside>
  );
}

function Share(props: { bucket: string; objectKey: string }) {
  const [seconds, setSeconds] = useState(3600);
  const [link, setLink] = useState<{ url: string; expiresAt: string } | undefined>(undefined);
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const create = async () => {
    try {
      setCopied(false);
      setLink(await api('POST', `buckets/${encodeURIComponent(props.bucket)}/share`, { body: { key: props.objectKey, expiresSeconds: seconds } }));
      setError(undefined);
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <div class="share">
      <div class="inline-form">
        <label class="field compact">
          <span>Share link valid for</span>
          <select value={String(seconds)} onChange={(event) => setSeconds(Number((event.target as HTMLSelectElement).value))}>
            {expiries.map((expiry) => (
              <option key={expiry.seconds} value={String(expiry.seconds)}>
                {expiry.label}
              </option>
            ))}
          </select>
        </label>
        <button class="button" type="button" onClick={create}>
          Create share link
        </button>
      </div>
      <ErrorNotice error={error} />
      {link ? (
        <div class="share-link">
          <label class="field">
            <span>Link (expires {when(link.expiresAt)})</span>
            <input class="mono" readOnly value={link.url} onFocus={(event) => (event.target as HTMLInputElement).select()} />
          </label>
          <button class="button small" type="button" onClick={() => navigator.clipboard.writeText(link.url).then(() => setCopied(true), (caught: unknown) => setError(caught))}>
            {copied ? 'Copied' : 'Copy link'}
          </button>
          <span class="sr-only" role="status">
            {copied ? 'The link is copied.' : ''}
          </span>
        </div>
      ) : null}
    </div>
  );
}
