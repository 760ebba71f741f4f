/**
 * Users and policies: add a user with its policies, enable or disable it, attach and detach
 * policies, remove it; list policies, write one in a JSON editor (the server's validator says
 * what is wrong), remove one no user holds. Built-in policies are shown read-only.
 */
import { useState } from 'preact/hooks';
import { api, ApiError } from './api';
import { ActionsHead, Badge, Card, ConfirmDialog, Empty, ErrorNotice, usePoll } from './components';
import { when } from './format';
import { AuditSection } from './audit-section';

interface UserRow {
  accessKey: string;
  enabled: boolean;
  policies: string[];
  createdAt: string;
}

interface PolicyRow {
  name: string;
  builtIn: boolean;
  document: unknown;
  users: string[];
}

const userPath = (accessKey: string) => `users/${encodeURIComponent(accessKey)}`;

export function UsersPage() {
  const users = usePoll(() => api<{ users: UserRow[] }>('GET', 'users'), 10_000);
  const policies = usePoll(() => api<{ policies: PolicyRow[] }>('GET', 'policies'), 30_000);
  const [actionError, setActionError] = useState<unknown>(undefined);
  const reload = () => {
    users.reload();
    policies.reload();
  };
  const run = async (work: () => Promise<unknown>) => {
    setActionError(undefined);
    try {
      await work();
      reload();
    } catch (caught) {
      setActionError(caught);
    }
  };
  const names = policies.data?.policies.map((policy) => policy.name) ?? [];
  return (
    <div class="page">
      <h1>Users</h1>
      <Card title="Add a user">
        <AddUser policyNames={names} onAdded={reload} />
      </Card>
      <ErrorNotice error={actionError ?? users.error} onClose={() => setActionError(undefined)} />
      <Card title={`Users${users.data ? ` (${users.data.users.length})` : ''}`}>
        {users.data && users.data.users.length === 0 ? <Empty>No users yet: the root keys are the only identity. Add one above.</Empty> : null}
        {users.data && users.data.users.length > 0 ? <UserTable users={users.data.users} policyNames={names} run={run} /> : null}
      </Card>
      <Policies data={policies.data?.policies} error={policies.error} onChanged={reload} />
      <AuditSection />
    </div>
  );
}

function AddUser(props: { policyNames: string[]; onAdded: () => void }) {
  const [accessKey, setAccessKey] = useState('');
  const [secretKey, setSecretKey] = useState('');
  const [chosen, setChosen] = useState<string[]>(['readonly']);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      await api('POST', 'users', { body: { accessKey, secretKey, policies: chosen } });
      setAccessKey('');
      setSecretKey('');
      setError(undefined);
      props.onAdded();
    } catch (caught) {
      setError(caught as ApiError);
    } finally {
      setBusy(false);
    }
  };
  const toggle = (name: string) => setChosen(chosen.includes(name) ? chosen.filter((item) => item !== name) : [...chosen, name]);
  return (
    <form onSubmit={submit} aria-label="Add a user">
      <div class="inline-form">
        <label class="field grow">
          <span>Access key</span>
          <input name="newAccessKey" value={accessKey} onInput={(event) => setAccessKey((event.target as HTMLInputElement).value)} autocomplete="off" spellcheck={false} placeholder="3–128 of A–Z a–z 0–9 - _ . = @" />
        </label>
        <label class="field grow">
          <span>Secret key</span>
          <input name="newSecretKey" type="password" value={secretKey} onInput={(event) => setSecretKey((event.target as HTMLInputElement).value)} autocomplete="new-password" placeholder="8–128 characters" />
        </label>
        <button class="button primary" type="submit" disabled={busy || accessKey === '' || secretKey === ''}>
          Add user
        </button>
      </div>
      <fieldset class="policy-choice">
        <legend>Policies</legend>
        {props.policyNames.map((name) => (
          <label key={name} class="check">
            <input type="checkbox" checked={chosen.includes(name)} onChange={() => toggle(name)} /> {name}
          </label>
        ))}
      </fieldset>
      {error ? (
        <p class="field-error" id="user-error" role="alert">
          <strong>{error.code}</strong> {error.message}
        </p>
      ) : null}
    </form>
  );
}

function UserTable(props: { users: UserRow[]; policyNames: string[]; run: (work: () => Promise<unknown>) => Promise<void> }) {
  const [removing, setRemoving] = useState<UserRow | undefined>(undefined);
  const { run } = props;
  return (
    <>
      <table class="table users-table">
        <thead>
          <tr>
            <th>Access key</th>
            <th>Status</th>
            <th>Policies</th>
            <th class="hide-narrow">Added</th>
            <ActionsHead />
          </tr>
        </thead>
        <tbody>
          {props.users.map((user) => (
            <tr key={user.accessKey}>
              <td class="strong break">{user.accessKey}</td>
              <td>
                <Badge state={user.enabled ? 'enabled' : 'disabled'} />
              </td>
              <td>
                <div class="chips">
                  {user.policies.map((policy) => (
                    <span key={policy} class="chip">
                      {policy}
                      <button class="link" type="button" aria-label={`Detach ${policy} from ${user.accessKey}`} title="Detach" onClick={() => run(() => api('DELETE', `${userPath(user.accessKey)}/policies/${encodeURIComponent(policy)}`))}>
                        ✕
                      </button>
                    </span>
                  ))}
                  <AttachPolicy user={user} names={props.policyNames.filter((name) => !user.policies.includes(name))} run={run} />
                </div>
              </td>
              <td class="hide-narrow nowrap">{when(user.createdAt)}</td>
              <td class="actions-col">
                <button class="button small" type="button" onClick={() => run(() => api('PUT', `${userPath(user.accessKey)}/enabled`, { body: { enabled: !user.enabled } }))}>
                  {user.enabled ? 'Disable' : 'Enable'}
                </button>
                <button class="button small danger" type="button" aria-label={`Remove user ${user.accessKey}`} onClick={() => setRemoving(user)}>
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {removing ? (
        <ConfirmDialog
          title="Remove this user?"
          confirmLabel="Remove user"
          danger
          onConfirm={() => {
            const user = removing;
            setRemoving(undefined);
            void run(() => api('DELETE', userPath(user.accessKey)));
          }}
          onCancel={() => setRemoving(undefined)}
        >
          <p>
            <strong>{removing.accessKey}</strong> can no longer sign requests or use the console, on every node, from the next request. Its objects stay.
          </p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}

function AttachPolicy(props: { user: UserRow; names: string[]; run: (work: () => Promise<unknown>) => Promise<void> }) {
  if (props.names.length === 0) return null;
  return (
    <select
      class="attach"
      aria-label={`Attach a policy to ${props.user.accessKey}`}
      value=""
      onChange={(event) => {
        const policy = (event.target as HTMLSelectElement).value;
        if (policy) void props.run(() => api('PUT', `${userPath(props.user.accessKey)}/policies/${encodeURIComponent(policy)}`));
      }}
    >
      <option value="">+ attach…</option>
      {props.names.map((name) => (
        <option key={name} value={name}>
          {name}
        </option>
      ))}
    </select>
  );
}

const examplePolicy = JSON.stringify(
  { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: ['arn:aws:s3:::team/*'] }] },
  null,
  2,
);

function Policies(props: { data: PolicyRow[] | undefined; error: unknown; onChanged: () => void }) {
  const [editing, setEditing] = useState<{ name: string; text: string; builtIn: boolean; isNew: boolean } | undefined>(undefined);
  const [removing, setRemoving] = useState<PolicyRow | undefined>(undefined);
  const [removeError, setRemoveError] = useState<unknown>(undefined);
  const open = (policy: PolicyRow) => setEditing({ name: policy.name, text: JSON.stringify(policy.document, null, 2), builtIn: policy.builtIn, isNew: false });
  const remove = async () => {
    try {
      await api('DELETE', `policies/${encodeURIComponent(removing!.name)}`);
      setRemoving(undefined);
      props.onChanged();
    } catch (caught) {
      setRemoveError(caught);
    }
  };
  return (
    <Card
      title={`Policies${props.data ? ` (${props.data.length})` : ''}`}
      actions={
        <button class="button small" type="button" onClick={() => setEditing({ name: '', text: examplePolicy, builtIn: false, isNew: true })}>
          New policy
        </button>
      }
    >
      <ErrorNotice error={props.error} />
      {editing ? <PolicyEditor key={editing.name || 'new'} {...editing} onClose={() => setEditing(undefined)} onSaved={() => { setEditing(undefined); props.onChanged(); }} /> : null}
      {props.data ? (
        <table class="table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Kind</th>
              <th class="hide-narrow">Users</th>
              <ActionsHead />
            </tr>
          </thead>
          <tbody>
            {props.data.map((policy) => (
              <tr key={policy.name}>
                <td class="strong">{policy.name}</td>
                <td>
                  <Badge state={policy.builtIn ? 'built-in' : 'created'} />
                </td>
                <td class="break hide-narrow">{policy.users.length === 0 ? <span class="muted">none</span> : policy.users.join(', ')}</td>
                <td class="actions-col">
                  <button class="button small" type="button" onClick={() => open(policy)}>
                    {policy.builtIn ? 'View' : 'Edit'}
                  </button>
                  {policy.builtIn ? null : (
                    <button class="button small danger" type="button" aria-label={`Delete policy ${policy.name}`} onClick={() => { setRemoveError(undefined); setRemoving(policy); }}>
                      Delete
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {removing ? (
        <ConfirmDialog title="Delete this policy?" confirmLabel="Delete policy" danger error={removeError} onConfirm={() => void remove()} onCancel={() => setRemoving(undefined)}>
          <p>
            Delete the policy <strong>{removing.name}</strong>? A policy attached to a user cannot be deleted: detach it first.
          </p>
        </ConfirmDialog>
      ) : null}
    </Card>
  );
}

function PolicyEditor(props: { name: string; text: string; builtIn: boolean; isNew: boolean; onClose: () => void; onSaved: () => void }) {
  const [name, setName] = useState(props.name);
  const [text, setText] = useState(props.text);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      await api('PUT', `policies/${encodeURIComponent(name)}`, { body: { document: text } });
      props.onSaved();
    } catch (caught) {
      setError(caught as ApiError);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="policy-editor" onSubmit={save} aria-label={props.builtIn ? `Policy ${props.name}` : 'Policy editor'}>
      <label class="field">
        <span>Policy name</span>
        <input name="policyName" value={name} readOnly={!props.isNew} onInput={(event) => setName((event.target as HTMLInputElement).value)} autocomplete="off" spellcheck={false} placeholder="e.g. team-read-write" />
      </label>
      <label class="field">
        <span>Policy document (IAM JSON){props.builtIn ? ' — built-in, read-only' : ''}</span>
        <textarea name="policyDocument" class="json" rows={14} value={text} readOnly={props.builtIn} spellcheck={false} aria-invalid={error ? 'true' : 'false'} aria-describedby={error ? 'policy-error' : undefined} onInput={(event) => setText((event.target as HTMLTextAreaElement).value)} />
      </label>
      {error ? (
        <p class="field-error" id="policy-error" role="alert">
          <strong>{error.code}</strong> {error.message}
        </p>
      ) : null}
      <div class="dialog-actions">
        <button class="button" type="button" onClick={props.onClose}>
          {props.builtIn ? 'Close' : 'Cancel'}
        </button>
        {props.builtIn ? null : (
          <button class="button primary" type="submit" disabled={busy || name === ''}>
            {busy ? 'Saving…' : 'Save policy'}
          </button>
        )}
      </div>
    </form>
  );
}
