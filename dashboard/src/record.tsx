import { Fragment } from 'preact';
import { useCallback, useState } from 'preact/hooks';
import { readRecord, type RecordDetail, type RecordHint } from './api';
import { Time } from './format';
import { usePolledRead, useRetry } from './live';
import { recordHref, type OpenRecord } from './address';
import { attemptsLabel, kindLabel } from './work';

/** The detail is read again this often while it is open (and at once after a retry). */
const RECORD_POLL_MS = 3_000;

type WorkNode = RecordDetail['work']['nodes'][number];
type EventNode = RecordDetail['events']['nodes'][number];

/** A record's current state as the detail shows it: what it is, a few fields, and the records it belongs to. */
interface RecordState {
  what: string;
  state: string | null;
  error: string | null;
  fields: [string, string][];
  links: { label: string; id: string; hint: RecordHint }[];
}

/** A scalar as text; null for nothing (or an object, which has no text of its own). */
const text = (value: unknown) => (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : null);

/** The state of a record from one of the shapes the API gives it in (a work's record field or an event's record). */
function stateOf(record: Record<string, unknown>, what: string): RecordState {
  const message = (value: unknown) => (value && typeof value === 'object' && 'message' in value ? text(value.message) : text(value));
  const links: RecordState['links'] = [];
  const accountId = typeof record.accountId === 'string' ? record.accountId : null;
  if (typeof record.locationId === 'string') links.push({ label: 'location', id: record.locationId, hint: { as: 'location', accountId } });
  if (accountId) links.push({ label: 'account', id: accountId, hint: { as: 'account' } });
  const fields: [string, string][] = [];
  for (const key of ['name', 'brandName', 'segmentId', 'connected'] as const) {
    const value = text(record[key]);
    if (value !== null) fields.push([key, value]);
  }
  return {
    what,
    state: text(record.state ?? record.status ?? record.scanStatus ?? record.syncStatus ?? record.reviewReplyState ?? record.betaSyncStatus),
    error: message(record.lastError ?? record.error ?? record.scanError ?? record.providerError ?? record.replyError ?? record.syncError),
    fields,
    links,
  };
}

/** The record a work names (its kind's field: post, location, …), with what it is. */
function recordOfWork(work: WorkNode): { record: Record<string, unknown>; what: string } | null {
  for (const what of ['post', 'location', 'updateJob', 'account', 'review', 'brand', 'scan'] as const) {
    const record = (work as Record<string, unknown>)[what];
    if (record && typeof record === 'object') return { record: record as Record<string, unknown>, what: what === 'updateJob' ? 'location update' : what };
  }
  return null;
}

function currentState(detail: RecordDetail, direct: Record<string, unknown> | null, hint: RecordHint | null): RecordState | null {
  if (direct && hint) return stateOf(direct, hint.as);
  // The work's record field is read now; an event's record is the state as that change left it (newest first).
  for (const work of detail.work.nodes) {
    const found = recordOfWork(work);
    if (found) return stateOf(found.record, found.what);
  }
  const event: EventNode | undefined = detail.events.nodes[0];
  return event ? stateOf(event.record, kindLabel(event.recordType).toLowerCase()) : null;
}

/**
 * One record (docs/operations.md): its current state, links to the records it belongs to, its work with each
 * attempt, and its events from the activity log. Opened by a row's record, a link, or a search by id.
 */
export function RecordPanel(props: { open: OpenRecord; token: string; onTokenRefused: () => void; retry: (id: string) => Promise<string | null> }) {
  const { id, hint } = props.open;
  const read = useCallback((token: string) => readRecord(token, id, hint), [id, hint]);
  const [refresh, setRefresh] = useState(0);
  const { value, problem } = usePolledRead(props.token, props.onTokenRefused, read, RECORD_POLL_MS, refresh);
  const detail = value?.detail;
  const state = detail ? currentState(detail, value.direct, hint) : null;
  const found = detail && (value.direct !== null || detail.work.totalCount > 0 || detail.events.totalCount > 0);
  return (
    <section class="panel record" aria-labelledby="record-title" data-record-id={value?.recordId ?? id}>
      <h2 id="record-title">
        {state ? `${state.what.charAt(0).toUpperCase()}${state.what.slice(1)}` : 'Record'} <code>{value?.recordId ?? id}</code>{' '}
        <a class="close" href="#">
          Close
        </a>
      </h2>
      {value && value.recordId !== id && (
        <p class="subject">
          <code>{id}</code> is a unit of work of this record.
        </p>
      )}
      {problem && (
        <p class="problem" role="alert">
          {problem}
        </p>
      )}
      {!detail ? (
        <p class="empty">{problem ? 'Not read: see the message above.' : 'Reading…'}</p>
      ) : !found ? (
        <p class="empty not-found">Nothing found for this id: no work and no event within reach names it.</p>
      ) : (
        <>
          {state && (
            <dl class="state">
              <dt>state</dt>
              <dd data-state={state.state ?? ''}>{state.state ?? '–'}</dd>
              {state.error && (
                <>
                  <dt>error</dt>
                  <dd class="error">{state.error}</dd>
                </>
              )}
              {state.fields.map(([name, value]) => (
                <Fragment key={name}>
                  <dt>{name}</dt>
                  <dd>{value}</dd>
                </Fragment>
              ))}
              {state.links.map((link) => (
                <Fragment key={link.label}>
                  <dt>{link.label}</dt>
                  <dd>
                    <a class="related" data-related={link.label} href={recordHref(link.id, link.hint)}>
                      <code>{link.id}</code>
                    </a>
                  </dd>
                </Fragment>
              ))}
            </dl>
          )}
          <h3>
            Work <span class="total">{detail.work.totalCount > detail.work.nodes.length ? `the newest ${detail.work.nodes.length} of ${detail.work.totalCount}` : ''}</span>
          </h3>
          {detail.work.nodes.length === 0 ? <p class="empty">No work.</p> : detail.work.nodes.map((work) => <WorkHistory key={work.id} work={work} retry={props.retry} onRetried={() => setRefresh((n) => n + 1)} />)}
          <h3>
            Events <span class="total">{detail.events.totalCount > detail.events.nodes.length ? `the newest ${detail.events.nodes.length} of ${detail.events.totalCount}` : ''}</span>
          </h3>
          {detail.events.nodes.length === 0 ? (
            <p class="empty">No events.</p>
          ) : (
            <table class="events">
              <thead>
                <tr>
                  <th scope="col">when</th>
                  <th scope="col">event</th>
                  <th scope="col">state after it</th>
                </tr>
              </thead>
              <tbody>
                {detail.events.nodes.map((event) => (
                  <tr key={event.id} data-event-id={event.id} data-event-type={event.type}>
                    <td>
                      <Time at={event.occurredAt} />
                    </td>
                    <td>
                      <code>{event.type}</code>
                    </td>
                    <td>{stateOf(event.record as Record<string, unknown>, '').state}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}

/** One unit of work and its attempts, each with its time, outcome and error; Retry where the policy allows it. */
function WorkHistory({ work, retry, onRetried }: { work: WorkNode; retry: (id: string) => Promise<string | null>; onRetried: () => void }) {
  const { busy, refusal, onRetry } = useRetry(retry, work.id, onRetried);
  return (
    <div class="work" data-work-id={work.id} data-kind={work.kind} data-status={work.status} data-run={work.run}>
      <p>
        <span class="kind">{kindLabel(work.kind)}</span> <span class={`status status-${work.status.toLowerCase()}`}>{work.status.replace(/_/g, ' ').toLowerCase()}</span>{' '}
        <span class="subject">
          attempts {attemptsLabel(work)}, created <Time at={work.createdAt} />
        </span>{' '}
        {work.retryable && (
          <button type="button" onClick={onRetry} disabled={busy}>
            Retry
          </button>
        )}
      </p>
      {refusal && (
        <p class="refusal" role="alert">
          Retry refused: {refusal}
        </p>
      )}
      {work.attemptHistory.length > 0 && (
        <table class="attempts">
          <thead>
            <tr>
              <th scope="col">attempt</th>
              <th scope="col">started</th>
              <th scope="col">ended</th>
              <th scope="col">outcome</th>
              <th scope="col">error</th>
            </tr>
          </thead>
          <tbody>
            {work.attemptHistory.map((attempt) => (
              <tr key={attempt.number} data-attempt={attempt.number} data-run={attempt.run} data-outcome={attempt.outcome}>
                <td class="number">
                  {attempt.runAttempt}/{work.maxAttempts}
                  {attempt.run > 1 || work.run > 1 ? `, run ${attempt.run}` : ''}
                </td>
                <td>
                  <Time at={attempt.startedAt} />
                </td>
                <td>
                  <Time at={attempt.endedAt} />
                </td>
                <td>{attempt.outcome.replace(/_/g, ' ').toLowerCase()}</td>
                <td class="error">{attempt.error}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
