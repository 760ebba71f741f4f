/**
 * One bucket setting as its S3 document (GET/PUT/DELETE buckets/<bucket>/settings/<name>): the
 * server runs S3's own handler, so a document S3 would refuse comes back with S3's error, shown
 * beside the editor. Forms for the common cases build the document and save it the same way.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api';
import { usePoll } from './components';
import { may, type Permissions } from './permissions';

export interface SettingState {
  /** The stored document; null when none is set; undefined while loading. */
  document: string | null | undefined;
  loadError: ApiError | Error | undefined;
  save: (document: string) => Promise<boolean>;
  remove: () => Promise<boolean>;
  saveError: ApiError | undefined;
  saved: boolean;
  busy: boolean;
  reload: () => void;
}

export function useSetting(bucket: string, name: string, onChanged?: () => void): SettingState {
  const path = `buckets/${encodeURIComponent(bucket)}/settings/${name}`;
  const { data, error, reload } = usePoll(() => api<{ document: string | null }>('GET', path), 0, [bucket, name]);
  const [saveError, setSaveError] = useState<ApiError | undefined>(undefined);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const run = async (work: () => Promise<unknown>) => {
    setBusy(true);
    setSaveError(undefined);
    setSaved(false);
    try {
      await work();
      setSaved(true);
      reload();
      onChanged?.();
      return true;
    } catch (caught) {
      setSaveError(caught as ApiError);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return {
    document: data?.document,
    loadError: error,
    save: (document) => run(() => api('PUT', path, { body: { document } })),
    remove: () => run(() => api('DELETE', path)),
    saveError,
    saved,
    busy,
    reload,
  };
}

/** Undefined when the session may; otherwise the reason (the server's judgement, GET permissions). */
export function settingReason(permissions: Permissions | undefined, name: string, verb: 'get' | 'put' | 'remove'): string | undefined {
  const judgement = may(permissions, `${name}.${verb}`);
  return judgement.allowed ? undefined : judgement.reason;
}

/** The refusal of a save, by the editor it concerns. */
export function SaveOutcome(props: { id: string; state: SettingState }) {
  const { saveError, saved } = props.state;
  if (saveError) {
    return (
      <p class="field-error" id={props.id} role="alert">
        <strong>{saveError.code}</strong> {saveError.message}
      </p>
    );
  }
  return saved ? (
    <p class="muted small" role="status">
      Saved.
    </p>
  ) : null;
}

/**
 * A document editor (XML or JSON) with Save and Remove: the text is the stored document, or
 * `template` for a setting not set yet.
 */
export function DocumentEditor(props: { id: string; label: string; state: SettingState; template: string; putReason: string | undefined; removeReason?: string | undefined; removable: boolean; draft?: string | undefined; outcomeHidden?: boolean }) {
  const { state } = props;
  const [text, setText] = useState('');
  useEffect(() => {
    if (state.document !== undefined) setText(state.document ?? props.template);
  }, [state.document]);
  // A helper outside the editor (a form, "make a prefix public") may hand it a new draft.
  useEffect(() => {
    if (props.draft !== undefined) setText(props.draft);
  }, [props.draft]);
  const errorId = `${props.id}-error`;
  return (
    <div class="setting-editor">
      <label class="field">
        <span>{props.label}</span>
        <textarea
          id={props.id}
          class="json"
          rows={10}
          value={text}
          spellcheck={false}
          readOnly={props.putReason !== undefined}
          aria-invalid={state.saveError && !props.outcomeHidden ? 'true' : 'false'}
          aria-describedby={state.saveError && !props.outcomeHidden ? errorId : props.putReason !== undefined ? `${props.id}-save-why` : undefined}
          onInput={(event) => setText((event.target as HTMLTextAreaElement).value)}
        />
      </label>
      {props.outcomeHidden ? null : <SaveOutcome id={errorId} state={state} />}
      <div class="setting-actions">
        <span class="guarded">
          <button class="button primary" type="button" disabled={state.busy || state.document === undefined || props.putReason !== undefined || text.trim() === ''} aria-describedby={props.putReason ? `${props.id}-save-why` : undefined} onClick={() => void state.save(text)}>
            Save
          </button>
          {props.putReason ? (
            <span class="reason" id={`${props.id}-save-why`}>
              {props.putReason}
            </span>
          ) : null}
        </span>
        {props.removable && state.document !== null && state.document !== undefined ? (
          <span class="guarded">
            <button class="button danger" type="button" disabled={state.busy || props.removeReason !== undefined} aria-describedby={props.removeReason ? `${props.id}-remove-why` : undefined} onClick={() => void state.remove()}>
              Remove
            </button>
            {props.removeReason ? (
              <span class="reason" id={`${props.id}-remove-why`}>
                {props.removeReason}
              </span>
            ) : null}
          </span>
        ) : null}
      </div>
    </div>
  );
}

// ---- reading and writing the XML documents in the browser (the server parses them again) ----

export function parseXml(text: string | null | undefined): Document | undefined {
  if (!text) return undefined;
  const document = new DOMParser().parseFromString(text, 'application/xml');
  return document.getElementsByTagName('parsererror').length > 0 ? undefined : document;
}

/** The text of the first element named `name` under `node` (namespaces ignored). */
export function childText(node: Element | Document, name: string): string | undefined {
  const found = node.getElementsByTagNameNS('*', name)[0] ?? node.getElementsByTagName(name)[0];
  return found?.textContent ?? undefined;
}

export function elements(node: Element | Document, name: string): Element[] {
  const found = node.getElementsByTagNameNS('*', name);
  return [...(found.length > 0 ? found : node.getElementsByTagName(name))];
}

/** The stored document with one more element at the end of its root `root` (a new document when there is none). */
export function withElement(document: string | null | undefined, root: string, element: string): string {
  const end = `</${root}>`;
  if (!document || !document.includes(end)) return `<${root}>${element}${end}`;
  return document.replace(new RegExp(`${end}\\s*$`), `${element}${end}`);
}

/** The stored document without its `name` element at `index` (undefined when none is left). */
export function withoutElement(document: string, name: string, index: number): string | undefined {
  const xml = parseXml(document)!;
  const found = elements(xml, name);
  found[index]?.remove();
  return found.length <= 1 ? undefined : new XMLSerializer().serializeToString(xml);
}

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}
