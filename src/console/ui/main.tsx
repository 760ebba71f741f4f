/** The console app: sign-in, then the pages, routed by the URL's fragment (#/buckets, ...). */
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, apiUrl, setCsrfToken, whenSignedOut } from './api';
import { ErrorNotice, usePoll } from './components';
import { HealthBanner, HealthContext, HealthMark, useHealthPoll } from './health';
import { PermissionsContext, type Permissions } from './permissions';
import { OverviewPage } from './page-overview';
import { BucketsPage } from './page-buckets';
import { BrowserPage } from './page-browser';
import { ClusterPage } from './page-cluster';
import { OperationsPage } from './page-operations';
import { ExplorerPage } from './page-explorer';
import { UsersPage } from './page-users';
import { BucketSettingsPage } from './page-bucket-settings';
import { GroupsPage } from './page-groups';
import { ServiceAccountsPage } from './page-service-accounts';
import { SessionsPage } from './page-sessions';
import { KmsPage } from './page-kms';

interface SessionInfo {
  accessKey: string;
  kind: 'root' | 'user' | 'sso';
  policies: string[];
  /** The pages this session's policies open. */
  pages: string[];
  csrfToken: string;
  expiresAt: string;
}

function useRoute(home: string): string[] {
  // A page's own settings follow a `?` (the object browser's page and page size) and are not route segments.
  const read = () => (location.hash.replace(/^#\/?/, '').split('?')[0] || home).split('/').map((part) => decodeURIComponent(part));
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const changed = () => setRoute(read());
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

function SignIn(props: { onSignedIn: (session: SessionInfo) => void }) {
  const [accessKey, setAccessKey] = useState('');
  const [secretKey, setSecretKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const secretInput = useRef<HTMLInputElement>(null);
  const accessInput = useRef<HTMLInputElement>(null);
  // autofocus acts only when a document loads: after a sign-out the form is rendered into a loaded page.
  useEffect(() => accessInput.current?.focus(), []);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      props.onSignedIn(await api<SessionInfo>('POST', 'session', { body: { accessKey, secretKey }, quietSignOut: true }));
    } catch (caught) {
      setError(caught);
      setSecretKey('');
      // The secret is typed again: the focus goes back to its field, not to the page's top.
      setTimeout(() => secretInput.current?.focus(), 0);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <form class="signin-card" onSubmit={submit} aria-label="Sign in">
        <div class="brand big">
          <span class="logo" aria-hidden="true" />
          svc
        </div>
        <h1>Sign in to the console</h1>
        <p class="muted">Use the deployment's root keys or a user's access key and secret key.</p>
        <label class="field">
          <span>Access key</span>
          <input ref={accessInput} name="accessKey" autocomplete="username" value={accessKey} onInput={(event) => setAccessKey((event.target as HTMLInputElement).value)} required autoFocus />
        </label>
        <label class="field">
          <span>Secret key</span>
          <input ref={secretInput} name="secretKey" type="password" autocomplete="current-password" value={secretKey} onInput={(event) => setSecretKey((event.target as HTMLInputElement).value)} required />
        </label>
        <ErrorNotice error={error} />
        <button class="button primary wide" type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <SsoButton />
      </form>
    </main>
  );
}

interface SsoStatus {
  configured: boolean;
  enabled: boolean;
  reason?: string;
}

/** "Sign in with SSO" beside the key sign-in when OpenID Connect is configured; disabled, with the reason, while the provider is unreachable. */
function SsoButton() {
  const [status, setStatus] = useState<SsoStatus | undefined>(undefined);
  useEffect(() => {
    api<SsoStatus>('GET', 'sso', { quietSignOut: true }).then(setStatus, () => setStatus(undefined));
  }, []);
  if (!status?.configured) return null;
  return (
    <div class="sso">
      <div class="sso-or muted">or</div>
      {status.enabled ? (
        <a class="button wide" href={apiUrl('sso/start')}>
          Sign in with SSO
        </a>
      ) : (
        <>
          <button class="button wide" type="button" disabled aria-describedby="sso-reason">
            Sign in with SSO
          </button>
          <p id="sso-reason" class="muted small">
            SSO is unavailable: {status.reason}
          </p>
        </>
      )}
    </div>
  );
}

const pages: { id: string; label: string }[] = [
  { id: 'overview', label: 'Overview' },
  { id: 'buckets', label: 'Buckets' },
  { id: 'cluster', label: 'Cluster' },
  { id: 'operations', label: 'Operations' },
  { id: 'explorer', label: 'Explorer' },
  { id: 'users', label: 'Users' },
  { id: 'groups', label: 'Groups' },
  { id: 'service-accounts', label: 'Service accounts' },
  { id: 'kms', label: 'KMS keys' },
  { id: 'sessions', label: 'Sessions' },
];

/** Pages every session opens: its own sessions are always its to see. */
const everySession = ['sessions'];

function Shell(props: { session: SessionInfo; onSignOut: () => void }) {
  const open = pages.filter((entry) => props.session.pages.includes(entry.id) || everySession.includes(entry.id));
  const route = useRoute(open[0]?.id ?? 'buckets');
  const [menuOpen, setMenuOpen] = useState(false);
  const page = route[0] === 'browse' || route[0] === 'settings' ? 'buckets' : route[0];
  const health = useHealthPoll(props.session.pages.includes('cluster'));
  const permissions = usePoll(() => api<Permissions>('GET', 'permissions'), 0).data;
  useEffect(() => {
    setMenuOpen(false);
    const label = route[0] === 'browse' || route[0] === 'settings' ? route[1] : pages.find((entry) => entry.id === page)?.label;
    document.title = `${label ?? 'Overview'} · svc console`;
  }, [route.join('/')]);
  return (
    <div class="shell">
      <header class="topbar">
        <button class="menu-toggle button" type="button" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <a class="brand" href="#/overview">
          <span class="logo" aria-hidden="true" />
          svc <span class="muted">console</span>
        </a>
        <div class="topbar-right">
          <span class="muted who" title={props.session.kind === 'root' ? 'Signed in with the root keys' : `Signed in with the policies ${props.session.policies.join(', ') || '(none)'}`}>
            {props.session.accessKey}
            {props.session.kind === 'root' ? null : <span class="who-policies"> · {props.session.policies.join(', ') || 'no policy'}</span>}
          </span>
          <button class="button" type="button" onClick={props.onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <nav id="nav" class={`nav ${menuOpen ? 'open' : ''}`} aria-label="Pages">
        {open.map((entry) => (
          <a key={entry.id} href={`#/${entry.id}`} class={page === entry.id ? 'active' : ''} aria-current={page === entry.id ? 'page' : undefined}>
            {entry.label}
            {entry.id === 'overview' || entry.id === 'cluster' ? <HealthMark health={health} /> : null}
          </a>
        ))}
      </nav>
      <main class="content">
        <HealthBanner health={health} />
        <HealthContext.Provider value={health}>
          <PermissionsContext.Provider value={permissions}>{page === 'buckets' || open.some((entry) => entry.id === page) ? pageFor(route) : <NotOffered page={page ?? ''} />}</PermissionsContext.Provider>
        </HealthContext.Provider>
      </main>
    </div>
  );
}

/** A page this session's policies do not open (the navigation does not offer it either). */
function NotOffered(props: { page: string }) {
  if (!pages.some((entry) => entry.id === props.page)) {
    return (
      <div class="page">
        <h1>Page not found</h1>
        <p>
          There is no page <code>{props.page}</code> in the console. <a href="#/buckets">Go to your buckets</a>
        </p>
      </div>
    );
  }
  return (
    <div class="page">
      <h1>Not available</h1>
      <ErrorNotice error={new ApiError(403, 'AccessDenied', `Your policies do not open the ${props.page} page. Ask an administrator for a policy that allows it (consoleAdmin opens every page).`)} />
      <p>
        <a href="#/buckets">Go to your buckets</a>
      </p>
    </div>
  );
}

/** A folder prefix from the route's remaining segments: `a/b/`, or '' for the bucket's top. */
function folderOf(segments: string[]): string {
  const path = segments.join('/');
  return path === '' || path.endsWith('/') ? path : `${path}/`;
}

function pageFor(route: string[]) {
  switch (route[0]) {
    case 'buckets':
      return <BucketsPage />;
    case 'browse':
      return <BrowserPage bucket={route[1] ?? ''} prefix={folderOf(route.slice(2))} />;
    case 'settings':
      return <BucketSettingsPage bucket={route[1] ?? ''} />;
    case 'cluster':
      return <ClusterPage />;
    case 'operations':
      return <OperationsPage />;
    case 'explorer':
      return <ExplorerPage bucket={route[1] ?? ''} objectKey={route.slice(2).join('/')} />;
    case 'users':
      return <UsersPage />;
    case 'groups':
      return <GroupsPage />;
    case 'service-accounts':
      return <ServiceAccountsPage />;
    case 'sessions':
      return <SessionsPage />;
    case 'kms':
      return <KmsPage />;
    default:
      return <OverviewPage />;
  }
}

function App() {
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined);
  const adopt = (next: SessionInfo | null) => {
    setCsrfToken(next?.csrfToken ?? '');
    setSession(next);
  };
  useEffect(() => {
    whenSignedOut(() => adopt(null));
    api<SessionInfo>('GET', 'session', { quietSignOut: true }).then(adopt, (error: ApiError) => adopt(error.code === 'ConsoleSignInRequired' ? null : null));
  }, []);
  if (session === undefined) return <div class="loading">Loading…</div>;
  if (session === null) return <SignIn onSignedIn={adopt} />;
  const signOut = async () => {
    await api('DELETE', 'session').catch(() => undefined);
    // The next session starts on its own first page, not on the page this one left.
    history.replaceState(null, '', location.pathname + location.search);
    adopt(null);
  };
  return <Shell session={session} onSignOut={signOut} />;
}

render(<App />, document.getElementById('app')!);
