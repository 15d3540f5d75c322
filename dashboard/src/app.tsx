import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, signIn, type Who } from './api';
import { useLiveWork, useProviderBudgets, useProviderHealth, useWebhookHealth } from './live';
import { CountsPanel, FailuresPanel, HealthPanel, LatestPanel, ProvidersPanel, WebhooksPanel } from './panels';
import { openRecordOf, type OpenRecord } from './address';
import { RecordPanel } from './record';
import { NO_FILTER, type WorkFilter, type WorkKind } from './work';

/** Kept for this browser tab only, as the token of a page that holds no data of its own. */
const TOKEN_KEY = 'listings-gateway.dashboard.token';

const REFUSED = 'The service refused this token: it is unknown or revoked. Sign in with another one.';

interface Session {
  token: string;
  who: Who;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export function App({ demoToken }: { demoToken: string | undefined }) {
  const [session, setSession] = useState<Session | null>(null);
  const [checking, setChecking] = useState(() => sessionStorage.getItem(TOKEN_KEY) !== null);
  const [notice, setNotice] = useState<string | null>(null);

  const signOut = useCallback((message: string | null) => {
    sessionStorage.removeItem(TOKEN_KEY);
    setSession(null);
    setNotice(message);
  }, []);

  const attempt = useCallback(async (token: string) => {
    try {
      const who = await signIn(token);
      sessionStorage.setItem(TOKEN_KEY, token);
      setNotice(null);
      setSession({ token, who });
    } catch (error) {
      sessionStorage.removeItem(TOKEN_KEY);
      setNotice(error instanceof ApiError && error.tokenRefused ? REFUSED : `Could not sign in: ${messageOf(error)}`);
    }
  }, []);

  // A reload keeps the tab signed in: the kept token is checked again.
  useEffect(() => {
    const kept = sessionStorage.getItem(TOKEN_KEY);
    if (kept) void attempt(kept).finally(() => setChecking(false));
  }, [attempt]);

  if (checking) return <p class="starting">Signing in…</p>;
  if (!session) return <SignIn notice={notice} initial={demoToken} onSubmit={attempt} />;
  return <Dashboard session={session} onSignOut={signOut} />;
}

function SignIn(props: { notice: string | null; initial: string | undefined; onSubmit: (token: string) => Promise<void> }) {
  const [token, setToken] = useState(props.initial ?? '');
  const [busy, setBusy] = useState(false);
  const submit = (event: Event) => {
    event.preventDefault();
    setBusy(true);
    void props.onSubmit(token.trim()).finally(() => setBusy(false));
  };
  return (
    <main class="sign-in">
      <form onSubmit={submit}>
        <h1>Listings Gateway operations</h1>
        <p>
          Sign in with an API token: an organization token shows the whole organization’s work, an account token its
          account’s. The token stays in this tab only.
        </p>
        <label for="token">API token</label>
        <input id="token" name="token" type="password" autoComplete="off" spellcheck={false} required value={token} onInput={(event) => setToken(event.currentTarget.value)} />
        {props.initial && <p class="hint">The demo organization’s token is filled in (development only).</p>}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {props.notice && (
          <p class="notice" role="alert">
            {props.notice}
          </p>
        )}
      </form>
    </main>
  );
}

/** Its own component: an account token may not read endpoints, so it never polls them. */
function Webhooks({ token, onTokenRefused }: { token: string; onTokenRefused: () => void }) {
  return <WebhooksPanel health={useWebhookHealth(token, onTokenRefused)} token={token} onTokenRefused={onTokenRefused} />;
}

/** The record whose detail is open, as the address names it (src/address.ts). */
function useOpenRecord(): OpenRecord | null {
  const [open, setOpen] = useState(() => openRecordOf(window.location.hash));
  useEffect(() => {
    const changed = () => setOpen(openRecordOf(window.location.hash));
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return open;
}

const CONNECTIVITY_TEXT = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…' } as const;

function Dashboard({ session, onSignOut }: { session: Session; onSignOut: (message: string | null) => void }) {
  const refused = useCallback(() => onSignOut(REFUSED), [onSignOut]);
  const [filter, setFilter] = useState<WorkFilter>(NO_FILTER);
  const live = useLiveWork(session.token, refused, filter);
  const health = useProviderHealth(session.token, refused);
  const budgets = useProviderBudgets(session.token, refused);
  const openRecord = useOpenRecord();
  const kinds = [...new Set(live.view.counts.map((count) => count.kind))] as WorkKind[];
  return (
    <>
      <header class="top">
        <h1>Listings Gateway operations</h1>
        <span class="who">{session.who.kind === 'organization' ? `Organization: ${session.who.name}` : 'Account token'}</span>
        <span class="connectivity" data-connectivity={live.connectivity}>
          {CONNECTIVITY_TEXT[live.connectivity]}
        </span>
        <button type="button" onClick={() => onSignOut(null)}>
          Sign out
        </button>
      </header>
      {live.problem && (
        <p class="problem" role="alert">
          {live.problem}
        </p>
      )}
      <main class="panels">
        {openRecord && <RecordPanel key={window.location.hash} open={openRecord} token={session.token} onTokenRefused={refused} retry={live.retry} />}
        <CountsPanel counts={live.view.counts} reading={live.reading} />
        <HealthPanel health={health} />
        <ProvidersPanel budgets={budgets} />
        {session.who.kind === 'organization' && <Webhooks token={session.token} onTokenRefused={refused} />}
        <FailuresPanel items={live.view.failures} counts={live.view.counts} reading={live.reading} retry={live.retry} />
        <LatestPanel
          items={live.view.latest}
          checks={live.view.checks}
          reading={live.reading}
          filter={filter}
          onFilter={setFilter}
          kinds={kinds}
          accounts={session.who.kind === 'organization' ? session.who.accounts : []}
        />
      </main>
    </>
  );
}
