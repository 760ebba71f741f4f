/**
 * Service accounts (`#/service-accounts`): access keys of a user that never hold more than it
 * does. List every user's (the page needs admin:ListServiceAccounts), create
 * one (the secret is shown once, in a dialog with a Copy button, and kept nowhere), edit its
 * inline policy and expiry, enable, disable, remove. Each call is the admin API's own route, run by the console server in-process.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from './api';
import { ActionsHead, Badge, Card, ConfirmDialog, Empty, ErrorNotice, usePoll } from './components';
import { when } from './format';
import { EditAccountDialog } from './service-account-edit';

interface ServiceAccount {
  accessKey: string;
  parent: string;
  enabled: boolean;
  name?: string;
  expiresMs?: number;
}

interface NewServiceAccount extends ServiceAccount {
  secretKey: string;
}

const iam = (path: string) => `admin/v4/iam/${path}`;

export function ServiceAccountsPage() {
  // The page needs admin:ListServiceAccounts (access.ts): it lists every user's.
  const accounts = usePoll(() => api<{ serviceAccounts: ServiceAccount[] }>('GET', iam('svcacct/list'), { query: { all: 'true' } }), 10_000);
  const users = usePoll(() => api<{ users: { accessKey: string }[] }>('GET', 'users'), 0);
  const [error, setError] = useState<unknown>(undefined);
  const [created, setCreated] = useState<NewServiceAccount | undefined>(undefined);
  const [removing, setRemoving] = useState<string | undefined>(undefined);
  const [editing, setEditing] = useState<ServiceAccount | undefined>(undefined);
  const run = async (work: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await work();
      accounts.reload();
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <div class="page">
      <h1>Service accounts</h1>
      <Card title="Create a service account">
        <NewAccount
          parents={users.data?.users.map((user) => user.accessKey)}
          onCreate={(body) =>
            run(async () => {
              setCreated((await api<{ serviceAccount: NewServiceAccount }>('POST', iam('svcacct/add'), { body })).serviceAccount);
            })
          }
        />
      </Card>
      <ErrorNotice error={error ?? accounts.error} onClose={() => setError(undefined)} />
      <Card title={`Service accounts${accounts.data ? ` (${accounts.data.serviceAccounts.length})` : ''}`} scrollable>
        {accounts.data && accounts.data.serviceAccounts.length === 0 ? <Empty>No service accounts yet.</Empty> : null}
        {accounts.data && accounts.data.serviceAccounts.length > 0 ? (
          <table class="table">
            <thead>
              <tr>
                <th>Access key</th>
                <th>User</th>
                <th class="hide-narrow">Name</th>
                <th class="hide-narrow">Expires</th>
                <ActionsHead />
              </tr>
            </thead>
            <tbody>
              {accounts.data.serviceAccounts.map((account) => (
                <tr key={account.accessKey}>
                  <td>
                    <code>{account.accessKey}</code> <Badge state={account.enabled ? 'enabled' : 'disabled'} />
                  </td>
                  <td>{account.parent}</td>
                  <td class="hide-narrow">{account.name ?? ''}</td>
                  <td class="hide-narrow nowrap">{account.expiresMs === undefined ? 'never' : when(new Date(account.expiresMs).toISOString())}</td>
                  <td class="actions-col">
                    <button class="button small" type="button" aria-label={`Edit ${account.accessKey}`} onClick={() => setEditing(account)}>
                      Edit
                    </button>
                    <button class="button small" type="button" aria-label={`${account.enabled ? 'Disable' : 'Enable'} ${account.accessKey}`} onClick={() => run(() => api('POST', iam('svcacct/update'), { query: { accessKey: account.accessKey }, body: { enabled: !account.enabled } }))}>
                      {account.enabled ? 'Disable' : 'Enable'}
                    </button>
                    <button class="button small danger" type="button" aria-label={`Remove ${account.accessKey}`} onClick={() => setRemoving(account.accessKey)}>
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </Card>
      {editing ? (
        <EditAccountDialog
          account={editing}
          onClose={() => setEditing(undefined)}
          onSaved={() => {
            setEditing(undefined);
            accounts.reload();
          }}
        />
      ) : null}
      {created ? <SecretOnce account={created} onClose={() => setCreated(undefined)} /> : null}
      {removing ? (
        <ConfirmDialog
          title={`Remove the service account ${removing}?`}
          confirmLabel="Remove"
          danger
          onCancel={() => setRemoving(undefined)}
          onConfirm={() => {
            const accessKey = removing;
            setRemoving(undefined);
            void run(() => api('POST', iam('svcacct/remove'), { query: { accessKey } }));
          }}
        >
          <p>Requests signed with its keys are refused from now on.</p>
        </ConfirmDialog>
      ) : null}
    </div>
  );
}

function NewAccount(props: { parents: string[] | undefined; onCreate: (body: Record<string, string>) => void }) {
  const [parent, setParent] = useState('');
  const [name, setName] = useState('');
  const [expiry, setExpiry] = useState('');
  return (
    <form
      class="inline-form"
      aria-label="Create a service account"
      onSubmit={(event) => {
        event.preventDefault();
        props.onCreate({ ...(parent !== '' ? { parent } : {}), ...(name !== '' ? { name } : {}), ...(expiry !== '' ? { expiry: new Date(`${expiry}T00:00:00Z`).toISOString() } : {}) });
        setName('');
      }}
    >
      {props.parents ? (
        <label class="field">
          <span>For the user</span>
          <select name="parent" value={parent} onChange={(event) => setParent((event.target as HTMLSelectElement).value)}>
            <option value="">Myself</option>
            {props.parents.map((user) => (
              <option key={user} value={user}>
                {user}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <label class="field grow">
        <span>Name (optional)</span>
        <input name="name" value={name} autocomplete="off" onInput={(event) => setName((event.target as HTMLInputElement).value)} />
      </label>
      <label class="field">
        <span>Expires on (optional)</span>
        <input name="expiry" type="date" value={expiry} onInput={(event) => setExpiry((event.target as HTMLInputElement).value)} />
      </label>
      <button class="button primary" type="submit">
        Create service account
      </button>
    </form>
  );
}

/** The new account's keys, shown this once: closing the dialog forgets the secret. */
function SecretOnce(props: { account: NewServiceAccount; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  const copy = async () => {
    await navigator.clipboard.writeText(props.account.secretKey).then(() => setCopied(true), () => setCopied(false));
  };
  return (
    <dialog ref={ref} class="dialog" aria-labelledby="secret-title" onCancel={(event) => { event.preventDefault(); props.onClose(); }}>
      <h2 id="secret-title">Service account created</h2>
      <div class="dialog-body">
        <p>Copy the secret key now: it is shown this once and never again.</p>
        <dl class="kv">
          <dt>Access key</dt>
          <dd>
            <code data-testid="new-access-key">{props.account.accessKey}</code>
          </dd>
          <dt>Secret key</dt>
          <dd>
            <code data-testid="new-secret-key">{props.account.secretKey}</code>
          </dd>
        </dl>
        <p role="status" class="muted small">
          {copied ? 'Secret key copied.' : ''}
        </p>
      </div>
      <div class="dialog-actions">
        <button class="button" type="button" onClick={copy}>
          Copy secret key
        </button>
        <button class="button primary" type="button" onClick={props.onClose} autoFocus>
          Done
        </button>
      </div>
    </dialog>
  );
}
