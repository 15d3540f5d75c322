import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import {
  ApiError,
  followWork,
  readCounts,
  readProviderBudgets,
  readProviderHealth,
  readSnapshot,
  readWebhookHealth,
  retryWork,
  type Connectivity,
  type ProviderBudget,
  type ProviderHealth,
  type WebhookEndpointHealth,
} from './api';
import { DEFAULT_LIMITS, WorkBoard, type BoardView, type WorkFilter, type WorkItem } from './work';

/** The counts are read again this often, besides being moved by every event. */
const COUNTS_REFRESH_MS = 10_000;
/** An event the counts could not take: they are read again this soon (events that follow share the read). */
const COUNTS_CATCH_UP_MS = 250;
/** Provider health is computed by the service over a recent window: read every 5 s. */
const HEALTH_POLL_MS = 5_000;
/** A provider's pause and the work waiting for it have no live event of their own: read as often as its health. */
const BUDGETS_POLL_MS = 5_000;
/** Webhook endpoints have no live event: their health is read as often as the providers'. */
const WEBHOOK_POLL_MS = 5_000;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export type Reading = 'reading' | 'read' | 'unread';

export interface LiveWork {
  view: BoardView;
  connectivity: Connectivity;
  /** Whether the first snapshot has been read, is being read, or could not be (`problem` says why). */
  reading: Reading;
  /** Why the panels may be out of date (the API refused a read, or the live updates stopped). */
  problem: string | null;
  /** Retries a dead-lettered item; resolves to the refusal's text, or null when it was accepted. */
  retry: (id: string) => Promise<string | null>;
}

/**
 * The work panels' data: a snapshot (latest items, failures, counts) read at the start and whenever the socket is
 * acknowledged again (events may have been missed meanwhile), and every `asyncWorkUpdated` event applied to it as
 * it arrives. Events arriving while a snapshot is read are applied again on top of it (WorkBoard.reset).
 */
export function useLiveWork(token: string, onTokenRefused: () => void, filter: WorkFilter): LiveWork {
  // A new filter is a new picture: read anew (the socket with it), as at the start.
  const filterKey = `${filter.kind} ${filter.status} ${filter.accountId}`;
  const board = useMemo(() => new WorkBoard(DEFAULT_LIMITS, filter), [token, filterKey]);
  const [view, setView] = useState<BoardView>(() => board.view());
  const [connectivity, setConnectivity] = useState<Connectivity>('connecting');
  const [loaded, setLoaded] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const refusedRef = useRef(onTokenRefused);
  refusedRef.current = onTokenRefused;

  useEffect(() => {
    let active = true;
    const publish = () => {
      if (active) setView(board.view());
    };
    /** A refused token ends the session; any other failure is shown. */
    const failed = (error: unknown, what: string) => {
      if (!active) return;
      if (error instanceof ApiError && error.tokenRefused) refusedRef.current();
      else setProblem(`${what}: ${messageOf(error)}`);
    };

    let countsTimer: ReturnType<typeof setTimeout> | undefined;
    const refreshCounts = async () => {
      clearTimeout(countsTimer);
      countsTimer = undefined;
      try {
        board.setCounts(await readCounts(token, filter.accountId));
        publish();
      } catch (error) {
        failed(error, 'Counts');
      }
    };
    const countsSoon = () => {
      countsTimer ??= setTimeout(() => void refreshCounts(), COUNTS_CATCH_UP_MS);
    };
    const take = (item: WorkItem) => {
      if (!board.apply(item).countsExact) countsSoon();
    };

    // Snapshots run one at a time; a request during one runs once it ends. Events received meanwhile are kept.
    let received: WorkItem[] | undefined;
    let again = false;
    const load = async (): Promise<void> => {
      if (received) {
        again = true;
        return;
      }
      received = [];
      try {
        const snapshot = await readSnapshot(token, DEFAULT_LIMITS, filter);
        board.reset(snapshot.latest, snapshot.failures, snapshot.counts, snapshot.checks);
        for (const item of received) take(item);
        if (active) {
          setLoaded(true);
          setProblem(null);
        }
        publish();
      } catch (error) {
        failed(error, 'Reading the work');
      } finally {
        received = undefined;
      }
      if (again && active) {
        again = false;
        await load();
      }
    };

    const stop = followWork(token, {
      item(item) {
        received?.push(item);
        take(item);
        publish();
      },
      connected: () => void load(),
      connectivity: (state) => active && setConnectivity(state),
      failed: (error) => failed(error, 'Live updates'),
      tokenRefused: () => active && refusedRef.current(),
    });
    void load();
    const timer = setInterval(() => void refreshCounts(), COUNTS_REFRESH_MS);
    return () => {
      active = false;
      stop();
      clearInterval(timer);
      clearTimeout(countsTimer);
    };
  }, [board, token]);

  const retry = async (id: string): Promise<string | null> => {
    try {
      // Shown at once; the event of the same change, when it arrives, is the same version and changes nothing.
      board.apply(await retryWork(token, id));
      setView(board.view());
      return null;
    } catch (error) {
      if (error instanceof ApiError && error.tokenRefused) refusedRef.current();
      return messageOf(error);
    }
  };

  return { view, connectivity, reading: loaded ? 'read' : problem ? 'unread' : 'reading', problem, retry };
}

export interface HealthState {
  providers: ProviderHealth[] | null;
  problem: string | null;
  readAt: Date | null;
}

/** A value read now and every `everyMs` after the previous read ends (so reads never overlap), with the last refusal. */
interface Polled<T> {
  value: T | null;
  problem: string | null;
  readAt: Date | null;
}

/** The one polling loop of the dashboard: a refused token goes to `onTokenRefused`, other failures keep the last value. */
export function usePolledRead<T>(token: string, onTokenRefused: () => void, read: (token: string) => Promise<T>, everyMs: number, refresh = 0): Polled<T> {
  const [state, setState] = useState<Polled<T>>({ value: null, problem: null, readAt: null });
  const refusedRef = useRef(onTokenRefused);
  refusedRef.current = onTokenRefused;
  useEffect(() => {
    let active = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const readOnce = async () => {
      try {
        const value = await read(token);
        if (active) setState({ value, problem: null, readAt: new Date() });
      } catch (error) {
        if (!active) return;
        if (error instanceof ApiError && error.tokenRefused) return refusedRef.current();
        setState((previous) => ({ ...previous, problem: messageOf(error) }));
      }
      if (active) timer = setTimeout(() => void readOnce(), everyMs);
    };
    void readOnce();
    return () => {
      active = false;
      clearTimeout(timer);
    };
    // `refresh`: a change the page made itself (a retry, a redelivery) is read at once.
  }, [token, read, everyMs, refresh]);
  return state;
}

/** providerHealth, read now and every 5 s. */
export function useProviderHealth(token: string, onTokenRefused: () => void): HealthState {
  const { value, problem, readAt } = usePolledRead(token, onTokenRefused, readProviderHealth, HEALTH_POLL_MS);
  return { providers: value, problem, readAt };
}

export interface ProviderBudgetsState {
  providers: ProviderBudget[] | null;
  problem: string | null;
}

/** providerBudgets, read now and every BUDGETS_POLL_MS. */
export function useProviderBudgets(token: string, onTokenRefused: () => void): ProviderBudgetsState {
  const { value, problem } = usePolledRead(token, onTokenRefused, readProviderBudgets, BUDGETS_POLL_MS);
  return { providers: value, problem };
}

export interface WebhookHealthState {
  endpoints: WebhookEndpointHealth[] | null;
  problem: string | null;
}

/** The organization's webhook endpoints, read every WEBHOOK_POLL_MS (organization tokens only: the caller checks). */
export function useWebhookHealth(token: string, onTokenRefused: () => void): WebhookHealthState {
  const { value, problem } = usePolledRead(token, onTokenRefused, readWebhookHealth, WEBHOOK_POLL_MS);
  return { endpoints: value, problem };
}

/**
 * A Retry button's state: busy while the retry is asked, and the refusal it was answered with (null: it was taken);
 * `after` runs once the answer came.
 */
export function useRetry(retry: (id: string) => Promise<string | null>, id: string, after?: () => void): { busy: boolean; refusal: string | null; onRetry: () => void } {
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<string | null>(null);
  const onRetry = () => {
    setBusy(true);
    setRefusal(null);
    void retry(id).then((message) => {
      setBusy(false);
      setRefusal(message);
      after?.();
    });
  };
  return { busy, refusal, onRetry };
}
