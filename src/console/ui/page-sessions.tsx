/**
 * Sessions (`#/sessions`): the signed-in principal's console sessions (began, last seen, address,
 * browser; this one marked), ending one or every other; with admin:ListUsers every principal's,
 * and with admin:DisableUser ending anyone's. Each node knows the sessions that reached it, in
 * memory, and the page says so.
 */
import { useState } from 'preact/hooks';
import { api } from './api';
import { ActionsHead, Badge, Card, Empty, ErrorNotice, RowAction, usePoll } from './components';
import { may, useDeploymentPermissions } from './permissions';
import { when } from './format';

interface ConsoleSession {
  handle: string;
  accessKey: string;
  kind: string;
  createdAt: string;
  lastSeenAt: string;
  address: string;
  agent: string;
  current: boolean;
}

export function SessionsPage() {
  const permissions = useDeploymentPermissions();
  const mine = usePoll(() => api<{ sessions: ConsoleSession[] }>('GET', 'sessions'), 15_000);
  const seesAll = may(permissions, 'listUsers').allowed;
  const mayEndAny = may(permissions, 'endSessions').allowed;
  const everyone = usePoll(() => (seesAll ? api<{ sessions: ConsoleSession[] }>('GET', 'sessions', { query: { all: 'true' } }) : Promise.resolve(undefined)), 15_000, [seesAll]);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (work: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await work();
    } catch (caught) {
      setError(caught);
    }
    mine.reload();
    everyone.reload();
  };
  const end = (session: ConsoleSession) => run(() => api('DELETE', `sessions/${encodeURIComponent(session.handle)}`));
  const others = mine.data?.sessions.filter((session) => !session.current) ?? [];
  return (
    <div class="page">
      <h1>Sessions</h1>
      <p class="muted">
        Console sessions this node has served since it started. A session is valid on every node; one ended here, or signed out, is refused at once by every node.
      </p>
      <ErrorNotice error={error ?? mine.error ?? everyone.error} onClose={() => setError(undefined)} />
      <Card
        title="Your sessions"
        scrollable
        actions={
          <button class="button small danger" type="button" disabled={others.length === 0} onClick={() => run(() => api('POST', 'sessions/end-others'))}>
            Sign out every other session
          </button>
        }
      >
        <SessionTable sessions={mine.data?.sessions} label="Your sessions" showWho={false} onEnd={end} />
      </Card>
      {seesAll ? (
        <Card title="Every session" scrollable>
          <SessionTable sessions={everyone.data?.sessions} label="Every session" showWho onEnd={mayEndAny ? end : undefined} />
        </Card>
      ) : null}
    </div>
  );
}

function SessionTable(props: { sessions: ConsoleSession[] | undefined; label: string; showWho: boolean; onEnd: ((session: ConsoleSession) => void) | undefined }) {
  if (!props.sessions) return <p class="muted">Loading…</p>;
  if (props.sessions.length === 0) return <Empty>No session.</Empty>;
  return (
    <table class="table sessions-table" aria-label={props.label}>
      <thead>
        <tr>
          {props.showWho ? <th>Who</th> : null}
          <th>Signed in</th>
          <th>Last seen</th>
          <th class="hide-narrow">Address</th>
          <th class="hide-narrow">Browser</th>
          <ActionsHead />
        </tr>
      </thead>
      <tbody>
        {props.sessions.map((session) => (
          <tr key={session.handle} data-handle={session.handle} data-current={session.current ? 'true' : 'false'}>
            {props.showWho ? (
              <td>
                <code>{session.accessKey}</code> <span class="muted small">{session.kind}</span>
              </td>
            ) : null}
            <td>
              {when(session.createdAt)} {session.current ? <Badge state="this session" /> : null}
            </td>
            <td>{when(session.lastSeenAt)}</td>
            <td class="hide-narrow mono">{session.address}</td>
            <td class="hide-narrow small truncate session-agent" title={session.agent}>
              {session.agent || '–'}
            </td>
            <RowAction offered={!session.current && props.onEnd !== undefined} label={`Sign out the session of ${session.accessKey} from ${session.address}, last seen ${when(session.lastSeenAt)}`} onClick={() => props.onEnd?.(session)}>
              Sign out
            </RowAction>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
