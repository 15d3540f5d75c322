import { useState } from 'preact/hooks';
import type { HealthState, Reading, WebhookHealthState } from './live';
import { FAILURE_STATUSES, kindLabel, STATUSES, type WorkCount, type WorkItem } from './work';

const time = (iso: string | null) => (iso ? new Date(iso).toLocaleTimeString([], { hour12: false }) : '');
const milliseconds = (ms: number | null) => (ms === null ? '–' : `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`);
const statusLabel = (status: string) => status.replace(/_/g, ' ').toLowerCase();

function Status({ status }: { status: string }) {
  return <span class={`status status-${status.toLowerCase()}`}>{statusLabel(status)}</span>;
}

/** The record a unit of work is about: its kind and the id of the post, location, update job, … */
function Subject({ item }: { item: WorkItem }) {
  return (
    <>
      <span class="kind">{kindLabel(item.kind)}</span> <code class="subject" title={item.accountId ? `account ${item.accountId}` : undefined}>{item.subjectId}</code>
    </>
  );
}

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

export function LatestPanel({ items, reading }: { items: readonly WorkItem[]; reading: Reading }) {
  return (
    <section class="panel latest" aria-labelledby="latest-title">
      <h2 id="latest-title">Latest work</h2>
      {items.length === 0 ? (
        <Waiting reading={reading} empty="No work yet." />
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
            {items.map((item) => (
              <tr key={item.id} data-work-id={item.id} data-kind={item.kind} data-subject-id={item.subjectId} data-status={item.status} data-version={item.version}>
                <td>
                  <Subject item={item} />
                </td>
                <td>
                  <Status status={item.status} />
                  {item.progress !== null && item.status === 'RUNNING' && <progress max={1} value={item.progress} title={`${Math.round(item.progress * 100)} %`} />}
                </td>
                <td class="number">
                  {item.attempts}/{item.maxAttempts}
                </td>
                <td>{time(item.createdAt)}</td>
                <td>{time(item.updatedAt)}</td>
                <td class="error">{item.error}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
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
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<string | null>(null);
  const onRetry = () => {
    setBusy(true);
    setRefusal(null);
    void retry(item.id).then((message) => {
      setBusy(false);
      setRefusal(message);
    });
  };
  return (
    <tr data-work-id={item.id} data-kind={item.kind} data-subject-id={item.subjectId} data-status={item.status} data-version={item.version}>
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
      <td class="number">
        {item.attempts}/{item.maxAttempts}
      </td>
      <td>{time(item.endedAt)}</td>
      <td>
        {item.retryable && (
          <button type="button" onClick={onRetry} disabled={busy}>
            Retry
          </button>
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
                <td class="error">{provider.lastError && `${provider.lastError} (${time(provider.lastErrorAt)})`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

const dateTime = (iso: string | null) => (iso ? new Date(iso).toLocaleString([], { hour12: false }) : '');

/**
 * Per webhook endpoint: its URL, whether it is enabled (and why the service disabled it), its newest delivery and
 * since when deliveries fail, and how many are still to be sent (docs/operations.md).
 */
export function WebhooksPanel({ health }: { health: WebhookHealthState }) {
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
            </tr>
          </thead>
          <tbody>
            {health.endpoints.map((endpoint) => {
              const last = endpoint.lastDelivery;
              return (
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
                        {endpoint.disabledAt && ` (${dateTime(endpoint.disabledAt)})`}
                      </p>
                    )}
                  </td>
                  <td class={last?.lastError ? 'error' : undefined} data-delivery-status={last?.status}>
                    {last ? (
                      <>
                        <Status status={last.status} /> {last.lastStatusCode !== null && <code>HTTP {last.lastStatusCode}</code>}{' '}
                        {dateTime(last.lastAttemptAt ?? last.createdAt)}
                        <div class="subject">
                          {last.eventType}, {last.attempts} attempt{last.attempts === 1 ? '' : 's'}
                        </div>
                        {last.lastError && <p class="reason">{last.lastError}</p>}
                      </>
                    ) : (
                      <span class="subject">none yet</span>
                    )}
                  </td>
                  <td class={endpoint.failingSince ? 'bad' : undefined}>{endpoint.failingSince ? dateTime(endpoint.failingSince) : ''}</td>
                  <td class={endpoint.backlog > 0 ? 'number bad' : 'number'}>{endpoint.backlog}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
