import { useCallback, useState } from 'preact/hooks';
import { readWebhookDeliveries, redeliver, type WebhookDelivery } from './api';
import { recordHref } from './address';
import { Time } from './format';
import { usePolledRead, type HealthState, type ProviderBudgetsState, type Reading, type WebhookHealthState, useRetry } from './live';
import { attemptsLabel, FAILURE_STATUSES, foldChecks, kindLabel, STATUSES, type LatestRow, type WorkCount, type WorkFilter, type WorkItem, type WorkKind } from './work';

const milliseconds = (ms: number | null) => (ms === null ? '–' : `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`);
const statusLabel = (status: string) => status.replace(/_/g, ' ').toLowerCase();

function Status({ status }: { status: string }) {
  return <span class={`status status-${status.toLowerCase()}`}>{statusLabel(status)}</span>;
}

/** The record a unit of work is about: its kind and the id of the post, location, update job, …, a link to its detail. */
function Subject({ item }: { item: Pick<WorkItem, 'kind' | 'subjectId' | 'accountId'> }) {
  return (
    <>
      <span class="kind">{kindLabel(item.kind)}</span>{' '}
      <a class="record-link" href={recordHref(item.subjectId)} title={item.accountId ? `account ${item.accountId}` : undefined}>
        <code class="subject">{item.subjectId}</code>
      </a>
    </>
  );
}

/** A row opens its record's detail when clicked anywhere but on a control of its own. */
const openOnClick = (subjectId: string) => (event: MouseEvent) => {
  if ((event.target as Element).closest('a, button, input, select, summary')) return;
  window.location.hash = recordHref(subjectId);
};

const NOT_READ = { reading: 'Reading…', unread: 'Not read: see the message above.' } as const;

function Waiting({ reading, empty }: { reading: Reading; empty: string }) {
  return <p class="empty">{reading === 'read' ? empty : NOT_READ[reading]}</p>;
}

export function CountsPanel({ counts, reading }: { counts: readonly WorkCount[]; reading: Reading }) {
  const byKey = new Map(counts.map((count) => [`${count.kind} ${count.status}`, count.count]));
  // The kinds are the service's modules' (the schema's AsyncWorkKind): the ones with work, in name order.
  const kinds = [...new Set(counts.map((count) => count.kind))].sort();
  return (
    <section class="panel counts" aria-labelledby="counts-title">
      <h2 id="counts-title">Work by kind and status</h2>
      {kinds.length === 0 ? (
        <Waiting reading={reading} empty="No work yet." />
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">kind</th>
              {STATUSES.map((status) => (
                <th scope="col" key={status}>
                  <Status status={status} />
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {kinds.map((kind) => (
              <tr key={kind}>
                <th scope="row">{kindLabel(kind)}</th>
                {STATUSES.map((status) => {
                  const count = byKey.get(`${kind} ${status}`) ?? 0;
                  return (
                    <td key={status} data-kind={kind} data-status={status} data-count={count}>
                      {count > 0 ? count : ''}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export interface LatestProps {
  items: readonly WorkItem[];
  checks: readonly WorkItem[];
  reading: Reading;
  filter: WorkFilter;
  onFilter: (filter: WorkFilter) => void;
  /** The kinds the filter offers: those with work. */
  kinds: readonly WorkKind[];
  /** The accounts the filter offers (organization tokens); empty: no account filter. */
  accounts: readonly { id: string; name: string }[];
}

export function LatestPanel(props: LatestProps) {
  const rows = foldChecks(props.items, props.checks);
  return (
    <section class="panel latest" aria-labelledby="latest-title">
      <h2 id="latest-title">Latest work</h2>
      <Filters {...props} />
      {rows.length === 0 ? (
        <Waiting reading={props.reading} empty={props.filter.kind || props.filter.status || props.filter.accountId ? 'No work matches the filters.' : 'No work yet.'} />
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">record</th>
              <th scope="col">status</th>
              <th scope="col">attempts</th>
              <th scope="col">created</th>
              <th scope="col">updated</th>
              <th scope="col">last error</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (row.type === 'work' ? <WorkRow key={row.item.id} item={row.item} /> : <ChecksRows key={`${row.kind} ${row.subjectId}`} group={row} />))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function WorkRow({ item, folded }: { item: WorkItem; folded?: boolean }) {
  return (
    <tr
      class={folded ? 'check clickable' : 'clickable'}
      onClick={openOnClick(item.subjectId)}
      data-work-id={item.id}
      data-kind={item.kind}
      data-subject-id={item.subjectId}
      data-status={item.status}
      data-version={item.version}
      data-run={item.run}
    >
      <td>{folded ? <span class="subject">{kindLabel(item.kind)}</span> : <Subject item={item} />}</td>
      <td>
        <Status status={item.status} />
        {item.progress !== null && item.status === 'RUNNING' && <progress max={1} value={item.progress} title={`${Math.round(item.progress * 100)} %`} />}
      </td>
      <td class="number attempts">{attemptsLabel(item)}</td>
      <td>
        <Time at={item.createdAt} />
      </td>
      <td>
        <Time at={item.updatedAt} />
      </td>
      <td class="error">{item.error}</td>
    </tr>
  );
}

/** A record's polling checks as one row (the newest check's status and times), and, unfolded, each check. */
function ChecksRows({ group }: { group: Extract<LatestRow, { type: 'checks' }> }) {
  const [open, setOpen] = useState(false);
  const newest = group.items[0]!;
  const count = group.items.length;
  return (
    <>
      <tr class="check-group clickable" onClick={openOnClick(group.subjectId)} data-kind={group.kind} data-subject-id={group.subjectId} data-checks={count} data-status={newest.status}>
        <td>
          <Subject item={newest} />{' '}
          <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
            {count} check{count === 1 ? '' : 's'} {open ? '▾' : '▸'}
          </button>
        </td>
        <td>
          <Status status={newest.status} />
        </td>
        <td class="number attempts">{attemptsLabel(newest)}</td>
        <td>
          <Time at={group.items[count - 1]!.createdAt} />
        </td>
        <td>
          <Time at={newest.updatedAt} />
        </td>
        <td class="error">{newest.error}</td>
      </tr>
      {open && group.items.map((item) => <WorkRow key={item.id} item={item} folded />)}
    </>
  );
}

/** Kind, status and account filters of the latest list, and the search of a record or a work by its id. */
function Filters(props: LatestProps) {
  const [search, setSearch] = useState('');
  const set = (change: Partial<WorkFilter>) => props.onFilter({ ...props.filter, ...change });
  const kinds = [...new Set([...props.kinds, ...(props.filter.kind ? [props.filter.kind] : [])])].sort();
  const find = (event: Event) => {
    event.preventDefault();
    const id = search.trim();
    if (id) window.location.hash = recordHref(id);
  };
  return (
    <div class="filters">
      <label>
        kind{' '}
        <select name="kind" value={props.filter.kind ?? ''} onChange={(event) => set({ kind: (event.currentTarget.value || null) as WorkKind | null })}>
          <option value="">any</option>
          {kinds.map((kind) => (
            <option key={kind} value={kind}>
              {kindLabel(kind)}
            </option>
          ))}
        </select>
      </label>
      <label>
        status{' '}
        <select name="status" value={props.filter.status ?? ''} onChange={(event) => set({ status: (event.currentTarget.value || null) as WorkFilter['status'] })}>
          <option value="">any</option>
          {STATUSES.map((status) => (
            <option key={status} value={status}>
              {statusLabel(status)}
            </option>
          ))}
        </select>
      </label>
      {props.accounts.length > 0 && (
        <label>
          account{' '}
          <select name="account" value={props.filter.accountId ?? ''} onChange={(event) => set({ accountId: event.currentTarget.value || null })}>
            <option value="">any</option>
            {props.accounts.map((account) => (
              <option key={account.id} value={account.id}>
                {account.name}
              </option>
            ))}
          </select>
        </label>
      )}
      <form class="search" role="search" onSubmit={find}>
        <input name="record-id" type="search" aria-label="Find a record or work by its id" placeholder="post, location, review, brand or work id" spellcheck={false} value={search} onInput={(event) => setSearch(event.currentTarget.value)} />
        <button type="submit">Find</button>
      </form>
    </div>
  );
}

export function FailuresPanel(props: { items: readonly WorkItem[]; counts: readonly WorkCount[]; reading: Reading; retry: (id: string) => Promise<string | null> }) {
  const total = props.counts.filter((count) => FAILURE_STATUSES.includes(count.status)).reduce((sum, count) => sum + count.count, 0);
  return (
    <section class="panel failures" aria-labelledby="failures-title">
      <h2 id="failures-title">
        Failures <span class="total">{total > props.items.length ? `the newest ${props.items.length} of ${total}` : ''}</span>
      </h2>
      {props.items.length === 0 ? (
        <Waiting reading={props.reading} empty="No failed work." />
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">record</th>
              <th scope="col">status</th>
              <th scope="col">reason</th>
              <th scope="col">attempts</th>
              <th scope="col">ended</th>
              <th scope="col" />
            </tr>
          </thead>
          <tbody>
            {props.items.map((item) => (
              <FailureRow key={item.id} item={item} retry={props.retry} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function FailureRow({ item, retry }: { item: WorkItem; retry: (id: string) => Promise<string | null> }) {
  const { busy, refusal, onRetry } = useRetry(retry, item.id);
  return (
    <tr class="clickable" onClick={openOnClick(item.subjectId)} data-work-id={item.id} data-kind={item.kind} data-subject-id={item.subjectId} data-status={item.status} data-version={item.version}>
      <td>
        <Subject item={item} />
      </td>
      <td>
        <Status status={item.status} />
      </td>
      <td class="error">
        {item.error ?? 'no reason recorded'}
        {refusal && (
          <p class="refusal" role="alert">
            Retry refused: {refusal}
          </p>
        )}
      </td>
      <td class="number attempts">{attemptsLabel(item)}</td>
      <td>
        <Time at={item.endedAt} />
      </td>
      <td class="actions">
        {item.retryable ? (
          <button type="button" onClick={onRetry} disabled={busy}>
            Retry
          </button>
        ) : (
          <a class="button" href={recordHref(item.subjectId)} title="Not retryable: act on the record itself (docs/async-work.md)">
            Open record
          </a>
        )}
      </td>
    </tr>
  );
}

export function HealthPanel({ health }: { health: HealthState }) {
  const windowSeconds = health.providers?.[0]?.windowSeconds;
  return (
    <section class="panel health" aria-labelledby="health-title">
      <h2 id="health-title">
        Provider health <span class="total">{windowSeconds ? `last ${windowSeconds} s, this process` : ''}</span>
      </h2>
      {health.problem && (
        <p class="problem" role="alert">
          {health.problem}
        </p>
      )}
      {!health.providers ? (
        <Waiting reading={health.problem ? 'unread' : 'reading'} empty="" />
      ) : health.providers.length === 0 ? (
        <p class="empty">No provider calls yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">provider</th>
              <th scope="col">calls</th>
              <th scope="col">errors</th>
              <th scope="col">p50</th>
              <th scope="col">p95</th>
              <th scope="col">last error</th>
            </tr>
          </thead>
          <tbody>
            {health.providers.map((provider) => (
              <tr key={provider.provider} data-provider={provider.provider} data-errors={provider.errors}>
                <th scope="row">{provider.provider}</th>
                <td class="number">{provider.calls}</td>
                <td class={provider.errors > 0 ? 'number bad' : 'number'}>{provider.errors}</td>
                <td class="number">{milliseconds(provider.latencyP50Ms)}</td>
                <td class="number">{milliseconds(provider.latencyP95Ms)}</td>
                <td class="error">
                  {provider.lastError && (
                    <>
                      {provider.lastError} (<Time at={provider.lastErrorAt} />)
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** A budget as operators set it: requests a second, and a minute's when a second's is not a whole number (300/min). */
function budgetLabel(perSecond: number | null): string {
  if (perSecond === null) return 'no budget';
  const perMinute = perSecond * 60;
  return Number.isInteger(perSecond) ? `${perSecond} requests/s` : `${Number(perSecond.toFixed(2))} requests/s (${Number(perMinute.toFixed(1))}/min)`;
}

/**
 * Per provider (docs/operations.md, "Provider budgets"): its budget, until when it is paused, the signed-in token's
 * work waiting for it and when the first of it is due, and the calls of the answering process waiting for a slot.
 */
export function ProvidersPanel({ budgets }: { budgets: ProviderBudgetsState }) {
  return (
    <section class="panel providers" aria-labelledby="providers-title">
      <h2 id="providers-title">
        Providers <span class="total">{budgets.providers ? 'budgets and waits, read every 5 s' : ''}</span>
      </h2>
      {budgets.problem && (
        <p class="problem" role="alert">
          {budgets.problem}
        </p>
      )}
      {!budgets.providers ? (
        <Waiting reading={budgets.problem ? 'unread' : 'reading'} empty="" />
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">provider</th>
              <th scope="col">budget</th>
              <th scope="col">pause</th>
              <th scope="col">your work waiting</th>
              <th scope="col">next due</th>
              <th scope="col" title="Calls of the process that answered, waiting for a slot of the budget now (every organization's)">
                calls waiting
              </th>
            </tr>
          </thead>
          <tbody>
            {budgets.providers.map((provider) => (
              <tr key={provider.provider} data-provider={provider.provider} data-paused={String(provider.pausedUntil !== null)} data-waiting={provider.waitingWork}>
                <th scope="row">{provider.provider}</th>
                <td class="budget">{budgetLabel(provider.requestsPerSecond)}</td>
                <td class={provider.pausedUntil ? 'pause paused' : 'pause'}>
                  {provider.pausedUntil ? (
                    <>
                      paused until <Time at={provider.pausedUntil} />
                    </>
                  ) : (
                    <span class="subject">not paused</span>
                  )}
                </td>
                <td class="number waiting">{provider.waitingWork}</td>
                <td class="next-due">
                  <Time at={provider.nextWaitingDueAt} />
                </td>
                <td class="number">{provider.waitingCalls}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/**
 * Per webhook endpoint: its URL, whether it is enabled (and why the service disabled it), its newest delivery and
 * since when deliveries fail, and how many are still to be sent (docs/operations.md).
 */
export function WebhooksPanel({ health, token, onTokenRefused }: { health: WebhookHealthState; token: string; onTokenRefused: () => void }) {
  const [open, setOpen] = useState<string | null>(null);
  return (
    <section class="panel webhooks" aria-labelledby="webhooks-title">
      <h2 id="webhooks-title">
        Webhook endpoints <span class="total">{health.endpoints ? `${health.endpoints.length}, read every 5 s` : ''}</span>
      </h2>
      {health.problem && (
        <p class="problem" role="alert">
          {health.problem}
        </p>
      )}
      {!health.endpoints ? (
        <Waiting reading={health.problem ? 'unread' : 'reading'} empty="" />
      ) : health.endpoints.length === 0 ? (
        <p class="empty">No webhook endpoints.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">endpoint</th>
              <th scope="col">state</th>
              <th scope="col">last delivery</th>
              <th scope="col">failing since</th>
              <th scope="col">backlog</th>
              <th scope="col" />
            </tr>
          </thead>
          <tbody>
            {health.endpoints.map((endpoint) => {
              const last = endpoint.lastDelivery;
              return [
                <tr key={endpoint.id} data-endpoint-id={endpoint.id} data-enabled={String(endpoint.enabled)} data-backlog={endpoint.backlog}>
                  <td>
                    <code class="url">{endpoint.url}</code>
                    {endpoint.description && <div class="subject">{endpoint.description}</div>}
                  </td>
                  <td class={endpoint.enabled ? undefined : 'error'}>
                    <span class={`status ${endpoint.enabled ? 'status-succeeded' : 'status-failed'}`}>{endpoint.enabled ? 'enabled' : 'disabled'}</span>
                    {!endpoint.enabled && (
                      <p class="reason">
                        {endpoint.disabledReason ?? 'disabled by the organization'}
                        {endpoint.disabledAt && (
                          <>
                            {' '}
                            (<Time at={endpoint.disabledAt} />)
                          </>
                        )}
                      </p>
                    )}
                  </td>
                  <td class={last?.lastError ? 'error' : undefined} data-delivery-status={last?.status}>
                    {last ? (
                      <>
                        <Status status={last.status} /> {last.lastStatusCode !== null && <code>HTTP {last.lastStatusCode}</code>}{' '}
                        <Time at={last.lastAttemptAt ?? last.createdAt} />
                        <div class="subject">
                          {last.eventType}, {last.attempts} attempt{last.attempts === 1 ? '' : 's'}
                        </div>
                        {last.lastError && <p class="reason">{last.lastError}</p>}
                      </>
                    ) : (
                      <span class="subject">none yet</span>
                    )}
                  </td>
                  <td class={endpoint.failingSince ? 'bad' : undefined}>
                    <Time at={endpoint.failingSince} />
                  </td>
                  <td class={endpoint.backlog > 0 ? 'number bad' : 'number'}>{endpoint.backlog}</td>
                  <td>
                    <button type="button" class="link" aria-expanded={open === endpoint.id} onClick={() => setOpen(open === endpoint.id ? null : endpoint.id)}>
                      Deliveries {open === endpoint.id ? '▾' : '▸'}
                    </button>
                  </td>
                </tr>,
                open === endpoint.id && (
                  <tr key={`${endpoint.id} deliveries`} class="deliveries-row">
                    <td colSpan={6}>
                      <Deliveries endpointId={endpoint.id} token={token} onTokenRefused={onTokenRefused} />
                    </td>
                  </tr>
                ),
              ];
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** An endpoint's deliveries are read this often while they are shown. */
const DELIVERIES_POLL_MS = 5_000;

/**
 * An endpoint's newest deliveries (docs/operations.md): per delivery its event, status and attempts, and unfolded the
 * request (headers per attempt, the body) and each answer's status and excerpt; Redeliver sends the event again.
 */
function Deliveries({ endpointId, token, onTokenRefused }: { endpointId: string; token: string; onTokenRefused: () => void }) {
  const read = useCallback((token: string) => readWebhookDeliveries(token, endpointId), [endpointId]);
  const [refresh, setRefresh] = useState(0);
  const { value, problem } = usePolledRead(token, onTokenRefused, read, DELIVERIES_POLL_MS, refresh);
  return (
    <div class="deliveries" data-endpoint-id={endpointId}>
      {problem && (
        <p class="problem" role="alert">
          {problem}
        </p>
      )}
      {!value ? (
        <Waiting reading={problem ? 'unread' : 'reading'} empty="" />
      ) : value.deliveries.length === 0 ? (
        <p class="empty">No deliveries yet.</p>
      ) : (
        <>
          <p class="subject">{value.total > value.deliveries.length ? `The newest ${value.deliveries.length} of ${value.total} deliveries.` : `${value.total} deliver${value.total === 1 ? 'y' : 'ies'}.`}</p>
          {value.deliveries.map((delivery) => (
            <DeliveryDetails key={delivery.id} endpointId={endpointId} delivery={delivery} token={token} onRedelivered={() => setRefresh((n) => n + 1)} />
          ))}
        </>
      )}
    </div>
  );
}

function DeliveryDetails(props: { endpointId: string; delivery: WebhookDelivery; token: string; onRedelivered: () => void }) {
  const { delivery } = props;
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState<string | null>(null);
  const onRedeliver = () => {
    setBusy(true);
    setAnswer(null);
    redeliver(props.token, props.endpointId, delivery.eventId).then(
      () => {
        setBusy(false);
        setAnswer('Queued again: the new delivery is listed above.');
        props.onRedelivered();
      },
      (error: unknown) => {
        setBusy(false);
        setAnswer(`Redeliver refused: ${error instanceof Error ? error.message : String(error)}`);
      },
    );
  };
  return (
    <details class="delivery" data-delivery-id={delivery.id} data-event-id={delivery.eventId} data-delivery-status={delivery.status}>
      <summary>
        <Status status={delivery.status} /> <code>{delivery.eventType}</code> <Time at={delivery.createdAt} />{' '}
        <span class="subject">
          {delivery.attempts} attempt{delivery.attempts === 1 ? '' : 's'}
          {delivery.redelivery ? ', a redelivery' : ''}
          {delivery.nextAttemptAt && delivery.status === 'PENDING' ? ', next at ' : ''}
        </span>
        {delivery.status === 'PENDING' && <Time at={delivery.nextAttemptAt} />}
      </summary>
      <div class="delivery-body">
        <p>
          Event <code>{delivery.eventId}</code>{' '}
          {/* A ping is about no event of the log: there is nothing to send again. */}
          {delivery.eventType !== 'ping' && (
            <button type="button" onClick={onRedeliver} disabled={busy}>
              Redeliver
            </button>
          )}
        </p>
        {answer && (
          <p class="refusal" role="status">
            {answer}
          </p>
        )}
        <h4>Request body</h4>
        <pre class="request-body">{delivery.requestBody}</pre>
        {delivery.attemptHistory.length === 0 ? (
          <p class="empty">Not sent yet.</p>
        ) : (
          delivery.attemptHistory.map((attempt) => (
            <div class="attempt" key={attempt.number} data-attempt={attempt.number} data-status-code={attempt.statusCode ?? ''}>
              <h4>
                Attempt {attempt.number}, <Time at={attempt.attemptedAt} />: {attempt.statusCode !== null ? <code>HTTP {attempt.statusCode}</code> : 'no answer'}
                {attempt.latencyMs !== null && <span class="subject"> in {attempt.latencyMs} ms</span>}
              </h4>
              {attempt.error && <p class="error">{attempt.error}</p>}
              <table class="headers">
                <tbody>
                  {attempt.requestHeaders.map((header) => (
                    <tr key={header.name}>
                      <th scope="row">{header.name}</th>
                      <td>
                        <code>{header.value}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <p class="subject">Answer’s excerpt (its first KiB):</p>
              <pre class="response-excerpt">{attempt.responseExcerpt ?? '(none)'}</pre>
            </div>
          ))
        )}
      </div>
    </details>
  );
}
