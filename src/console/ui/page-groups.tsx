/**
 * Groups (`#/groups`): every group with its members, policies and state; create one with its
 * first members, add and remove members, attach and detach policies, enable, disable, remove an
 * empty group. Each call is the admin API's own IAM route, run by the console server in-process
 * (`api/admin/v4/iam/...`), judged by the admin actions it declares.
 */
import { useState } from 'preact/hooks';
import { api } from './api';
import { ActionsHead, Badge, Card, ConfirmDialog, Empty, ErrorNotice, usePoll } from './components';

interface GroupRow {
  name: string;
  enabled: boolean;
  members: string[];
  policies: string[];
}

const iam = (path: string) => `admin/v4/iam/${path}`;

export function GroupsPage() {
  const groups = usePoll(() => api<{ groups: GroupRow[] }>('GET', iam('groups')), 10_000);
  const users = usePoll(() => api<{ users: { accessKey: string }[] }>('GET', 'users'), 0);
  const policies = usePoll(() => api<{ policies: { name: string }[] }>('GET', 'policies'), 0);
  const [error, setError] = useState<unknown>(undefined);
  const [removing, setRemoving] = useState<string | undefined>(undefined);
  const run = async (work: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await work();
      groups.reload();
    } catch (caught) {
      setError(caught);
    }
  };
  const userNames = users.data?.users.map((user) => user.accessKey) ?? [];
  const policyNames = policies.data?.policies.map((policy) => policy.name) ?? [];
  return (
    <div class="page">
      <h1>Groups</h1>
      <Card title="Create a group">
        <NewGroup userNames={userNames} onCreate={(name, member) => run(() => api('POST', iam('group/add'), { query: { group: name }, body: { members: [member] } }))} />
      </Card>
      <ErrorNotice error={error ?? groups.error} onClose={() => setError(undefined)} />
      <Card title={`Groups${groups.data ? ` (${groups.data.groups.length})` : ''}`} scrollable>
        {groups.data && groups.data.groups.length === 0 ? <Empty>No groups yet: create one above with its first member.</Empty> : null}
        {groups.data && groups.data.groups.length > 0 ? (
          <table class="table">
            <thead>
              <tr>
                <th>Group</th>
                <th>Members</th>
                <th>Policies</th>
                <ActionsHead />
              </tr>
            </thead>
            <tbody>
              {groups.data.groups.map((group) => (
                <GroupRowView key={group.name} group={group} userNames={userNames} policyNames={policyNames} run={run} onRemove={() => setRemoving(group.name)} />
              ))}
            </tbody>
          </table>
        ) : null}
      </Card>
      {removing ? (
        <ConfirmDialog
          title={`Remove the group ${removing}?`}
          confirmLabel="Remove group"
          danger
          onCancel={() => setRemoving(undefined)}
          onConfirm={() => {
            const name = removing;
            setRemoving(undefined);
            void run(() => api('POST', iam('group/remove'), { query: { group: name }, body: {} }));
          }}
        >
          <p>Its members keep their own policies; the group's stop applying to them. A group with members cannot be removed: take them out first.</p>
        </ConfirmDialog>
      ) : null}
    </div>
  );
}

function NewGroup(props: { userNames: string[]; onCreate: (name: string, member: string) => void }) {
  const [name, setName] = useState('');
  const [member, setMember] = useState('');
  return (
    <form
      class="inline-form"
      aria-label="Create a group"
      onSubmit={(event) => {
        event.preventDefault();
        props.onCreate(name, member);
        setName('');
      }}
    >
      <label class="field grow">
        <span>Group name</span>
        <input name="group" value={name} autocomplete="off" spellcheck={false} onInput={(event) => setName((event.target as HTMLInputElement).value)} />
      </label>
      <label class="field">
        <span>First member</span>
        <select name="member" value={member} onChange={(event) => setMember((event.target as HTMLSelectElement).value)}>
          <option value="">Choose a user</option>
          {props.userNames.map((user) => (
            <option key={user} value={user}>
              {user}
            </option>
          ))}
        </select>
      </label>
      <button class="button primary" type="submit" disabled={name === '' || member === ''}>
        Create group
      </button>
    </form>
  );
}

function GroupRowView(props: { group: GroupRow; userNames: string[]; policyNames: string[]; run: (work: () => Promise<unknown>) => Promise<void>; onRemove: () => void }) {
  const { group, run } = props;
  const query = { group: group.name };
  const candidates = props.userNames.filter((user) => !group.members.includes(user));
  const attachable = props.policyNames.filter((policy) => !group.policies.includes(policy));
  return (
    <tr>
      <td>
        <strong>{group.name}</strong> <Badge state={group.enabled ? 'enabled' : 'disabled'} />
      </td>
      <td>
        <ul class="chips" aria-label={`Members of ${group.name}`}>
          {group.members.map((member) => (
            <li key={member} class="chip">
              {member}
              <button class="link" type="button" aria-label={`Remove ${member} from ${group.name}`} onClick={() => run(() => api('POST', iam('group/remove'), { query, body: { members: [member] } }))}>
                ✕
              </button>
            </li>
          ))}
        </ul>
        <Chooser label={`Add a member to ${group.name}`} options={candidates} onChoose={(user) => run(() => api('POST', iam('group/add'), { query, body: { members: [user] } }))} />
      </td>
      <td>
        <ul class="chips" aria-label={`Policies of ${group.name}`}>
          {group.policies.map((policy) => (
            <li key={policy} class="chip">
              {policy}
              <button class="link" type="button" aria-label={`Detach ${policy} from ${group.name}`} onClick={() => run(() => api('POST', iam('policy/detach'), { query: { policy, group: group.name } }))}>
                ✕
              </button>
            </li>
          ))}
        </ul>
        <Chooser label={`Attach a policy to ${group.name}`} options={attachable} onChoose={(policy) => run(() => api('POST', iam('policy/attach'), { query: { policy, group: group.name } }))} />
      </td>
      <td class="actions-col">
        <button class="button small" type="button" onClick={() => run(() => api('POST', iam(`group/${group.enabled ? 'disable' : 'enable'}`), { query }))}>
          {group.enabled ? 'Disable' : 'Enable'}
        </button>
        {group.members.length === 0 ? (
          <button class="button small danger" type="button" aria-label={`Remove group ${group.name}`} onClick={props.onRemove}>
            Remove
          </button>
        ) : null}
      </td>
    </tr>
  );
}

/** A select that acts as soon as something is chosen (then returns to its prompt). */
function Chooser(props: { label: string; options: string[]; onChoose: (value: string) => void }) {
  if (props.options.length === 0) return null;
  return (
    <select
      class="chooser"
      aria-label={props.label}
      value=""
      onChange={(event) => {
        const value = (event.target as HTMLSelectElement).value;
        if (value !== '') props.onChoose(value);
      }}
    >
      <option value="">{props.label.split(' to ')[0]}…</option>
      {props.options.map((option) => (
        <option key={option} value={option}>
          {option}
        </option>
      ))}
    </select>
  );
}
