/**
 * The object page's changes: restore an older version as the latest, edit the latest version's
 * tags, and its metadata and content type (a copy in place, so a new version on a versioned
 * bucket). Each is one call the server runs through S3's own handler, whose refusal is shown in
 * the dialog that asked.
 */
import { useState } from 'preact/hooks';
import { api } from './api';
import { ConfirmDialog } from './components';
import type { ObjectVersion } from './page-object';

interface Pair {
  key: string;
  value: string;
}

const objectPath = (bucket: string, action: string) => `buckets/${encodeURIComponent(bucket)}/${action}`;

/** Runs a change from a dialog: busy while it runs, its refusal kept for the dialog, `onDone` after success. */
function useChange(onDone: () => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (work: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
      onDone();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

/** Rows of names and values, each with its own labelled inputs and a Remove button. */
function PairRows(props: { what: string; pairs: Pair[]; onChange: (pairs: Pair[]) => void; keyLabel: string }) {
  const set = (index: number, change: Partial<Pair>) => props.onChange(props.pairs.map((pair, at) => (at === index ? { ...pair, ...change } : pair)));
  return (
    <div class="pair-rows">
      {props.pairs.length === 0 ? <p class="muted small">None.</p> : null}
      {props.pairs.map((pair, index) => (
        <div class="pair-row" key={index}>
          <label class="field compact">
            <span>
              {props.keyLabel} {index + 1}
            </span>
            <input value={pair.key} spellcheck={false} autocomplete="off" onInput={(event) => set(index, { key: (event.target as HTMLInputElement).value })} />
          </label>
          <label class="field compact grow">
            <span>Value {index + 1}</span>
            <input value={pair.value} spellcheck={false} autocomplete="off" onInput={(event) => set(index, { value: (event.target as HTMLInputElement).value })} />
          </label>
          <button class="button small" type="button" aria-label={`Remove ${props.what} ${index + 1}`} onClick={() => props.onChange(props.pairs.filter((_pair, at) => at !== index))}>
            Remove
          </button>
        </div>
      ))}
      <button class="button small" type="button" onClick={() => props.onChange([...props.pairs, { key: '', value: '' }])}>
        Add {props.what}
      </button>
    </div>
  );
}

export function TagsDialog(props: { bucket: string; version: ObjectVersion; onClose: () => void; onSaved: () => void }) {
  const [tags, setTags] = useState<Pair[]>(props.version.tags.map((tag) => ({ ...tag })));
  const change = useChange(props.onSaved);
  const save = () => change.run(() => api('PUT', objectPath(props.bucket, 'tags'), { body: { key: props.version.key, tags: tags.filter((tag) => tag.key !== '' || tag.value !== '') } }));
  return (
    <ConfirmDialog title="Edit tags" confirmLabel="Save tags" busy={change.busy} error={change.error} onConfirm={save} onCancel={props.onClose}>
      <p class="muted small">The latest version's tags are replaced by these (at most 10; none removes them).</p>
      <PairRows what="tag" keyLabel="Key" pairs={tags} onChange={setTags} />
    </ConfirmDialog>
  );
}

const headerNames = ['cache-control', 'content-disposition', 'content-encoding', 'content-language', 'expires'];

export function MetadataDialog(props: { bucket: string; version: ObjectVersion; versioned: boolean; onClose: () => void; onSaved: () => void }) {
  const { version } = props;
  const [contentType, setContentType] = useState(version.contentType ?? '');
  const [metadata, setMetadata] = useState<Pair[]>(Object.entries(version.userMetadata).map(([key, value]) => ({ key, value })));
  const [headers, setHeaders] = useState<Record<string, string>>(Object.fromEntries(headerNames.map((name) => [name, version.headers[name] ?? ''])));
  const change = useChange(props.onSaved);
  const save = () =>
    change.run(() =>
      api('PUT', objectPath(props.bucket, 'metadata'), {
        body: {
          key: version.key,
          contentType,
          metadata: Object.fromEntries(metadata.filter((pair) => pair.key !== '').map((pair) => [pair.key, pair.value])),
          headers: Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== '')),
        },
      }),
    );
  return (
    <ConfirmDialog title="Edit metadata" confirmLabel="Save metadata" busy={change.busy} error={change.error} onConfirm={save} onCancel={props.onClose}>
      <p class="muted small">
        The object is copied onto itself with the new metadata{props.versioned ? ', as a new latest version (the current one stays as an older version)' : ''}; its tags, encryption and storage class stay.
      </p>
      <label class="field compact">
        <span>Content type</span>
        <input value={contentType} spellcheck={false} autocomplete="off" onInput={(event) => setContentType((event.target as HTMLInputElement).value)} />
      </label>
      {headerNames.map((name) => (
        <label class="field compact" key={name}>
          <span class="mono">{name}</span>
          <input value={headers[name]} spellcheck={false} autocomplete="off" onInput={(event) => setHeaders({ ...headers, [name]: (event.target as HTMLInputElement).value })} />
        </label>
      ))}
      <h3>User metadata</h3>
      <PairRows what="metadata entry" keyLabel="Name" pairs={metadata} onChange={setMetadata} />
    </ConfirmDialog>
  );
}

export function RestoreDialog(props: { bucket: string; version: ObjectVersion; onClose: () => void; onRestored: () => void }) {
  const change = useChange(props.onRestored);
  const restore = () => change.run(() => api('POST', objectPath(props.bucket, 'restore'), { body: { key: props.version.key, versionId: props.version.versionId } }));
  return (
    <ConfirmDialog title="Restore this version as the latest?" confirmLabel="Restore" busy={change.busy} error={change.error} onConfirm={restore} onCancel={props.onClose}>
      <p>A copy of this version becomes the latest version; every version stays.</p>
      <p class="mono break">{props.version.versionId}</p>
    </ConfirmDialog>
  );
}
