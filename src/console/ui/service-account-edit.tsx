/**
 * Editing a service account (the admin API's svcacct/update, run in-process): its inline policy in
 * a JSON editor (the server's policy parser decides, and its refusal, `MalformedPolicy` saying
 * what is wrong, is shown beside the editor; empty text drops the policy) and its expiry (a date;
 * the server refuses one in the past; empty: never).
 */
import { useState } from 'preact/hooks';
import { api, ApiError } from './api';
import { ConfirmDialog, usePoll } from './components';

export interface EditableAccount {
  accessKey: string;
  parent: string;
  expiresMs?: number;
  policy?: Record<string, unknown>;
}

const iam = (path: string) => `admin/v4/iam/${path}`;

function dateOf(ms: number | undefined): string {
  return ms === undefined ? '' : new Date(ms).toISOString().slice(0, 10);
}

export function EditAccountDialog(props: { account: EditableAccount; onClose: () => void; onSaved: () => void }) {
  const info = usePoll(() => api<{ serviceAccount: EditableAccount }>('GET', iam('svcacct/info'), { query: { accessKey: props.account.accessKey } }), 0, [props.account.accessKey]);
  const stored = info.data?.serviceAccount;
  const [policyText, setPolicyText] = useState<string | undefined>(undefined);
  const [expiry, setExpiry] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const shownPolicy = policyText ?? (stored?.policy ? JSON.stringify(stored.policy, null, 2) : '');
  const shownExpiry = expiry ?? dateOf(stored?.expiresMs);
  const save = async () => {
    setError(undefined);
    let policy: unknown = null;
    if (shownPolicy.trim() !== '') {
      try {
        policy = JSON.parse(shownPolicy);
      } catch (caught) {
        setError(new ApiError(0, 'MalformedPolicy', `The policy is not JSON: ${(caught as Error).message}`));
        return;
      }
    }
    setBusy(true);
    try {
      await api('POST', iam('svcacct/update'), { query: { accessKey: props.account.accessKey }, body: { policy, expiry: shownExpiry === '' ? null : new Date(`${shownExpiry}T00:00:00Z`).toISOString() } });
      props.onSaved();
    } catch (caught) {
      setError(caught as ApiError);
    } finally {
      setBusy(false);
    }
  };
  return (
    <ConfirmDialog title={`Edit the service account ${props.account.accessKey}`} confirmLabel="Save" busy={busy} disabled={stored === undefined} error={info.error} onConfirm={save} onCancel={props.onClose}>
      <p class="muted small">It acts for {props.account.parent} and never holds more than that user does; its inline policy narrows it further.</p>
      <label class="field">
        <span>Inline policy (JSON; empty: none, the user's own permissions)</span>
        <textarea class="json" rows={10} spellcheck={false} value={shownPolicy} aria-invalid={error ? 'true' : 'false'} aria-describedby={error ? 'svcacct-policy-error' : undefined} onInput={(event) => setPolicyText((event.target as HTMLTextAreaElement).value)} />
      </label>
      {error ? (
        <p class="field-error" id="svcacct-policy-error" role="alert">
          <strong>{error.code}</strong> {error.message}
        </p>
      ) : null}
      <label class="field">
        <span>Expires on (empty: never; a past date is refused)</span>
        <input type="date" value={shownExpiry} onInput={(event) => setExpiry((event.target as HTMLInputElement).value)} />
      </label>
    </ConfirmDialog>
  );
}
