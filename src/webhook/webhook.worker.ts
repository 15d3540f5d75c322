import type { Knex } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { defineWorker, type AnyWorker, type JobContext, type JobEngine } from '../jobs/job-engine';
import type { JobFailure } from '../jobs/failure-policy';
import { sendWebhook, type WebhookOutcome } from './webhook-sender';
import { deliveryHeaders } from './webhook-signature';
import { PING_EVENT_TYPE, WebhookDeliveryStatus } from './webhook.enums';
import { nextAttemptAfterFailure, RETRY_WINDOW_MS } from './webhook.rules';
import { deliverQueue } from './webhook.queues';
import type { Clock } from '../shared/clock';
import type { Config } from '../config';
import type { Database } from '../db/orm';
import type { EventBus } from '../events/event-bus';
import type { Metrics } from '../observability/metrics';
import type { SecretBox } from '../shared/secret-box';

type WebhookWorkerDeps = { database: Database; jobs: JobEngine; events: EventBus; clock: Clock; config: Config; metrics: Metrics | undefined; secrets: SecretBox };

interface DeliveryRow {
  id: string;
  status: WebhookDeliveryStatus;
  event_id: string;
  event_type: string;
  body: string;
  attempts: number;
  created_at: Date | string;
  endpoint_id: string;
  url: string;
  enabled: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | string | null;
  failing_since: Date | null;
}

/** The secrets that sign now: the current one, and the one before a rotation during its grace period. */
function signingSecrets(runtime: WebhookWorkerDeps, row: DeliveryRow, now: Date): string[] {
  const secrets = [runtime.secrets.open(row.secret)];
  if (row.previous_secret && row.previous_secret_expires_at && new Date(row.previous_secret_expires_at) > now) secrets.push(runtime.secrets.open(row.previous_secret));
  return secrets;
}

/**
 * Sends one SENDING delivery and records the attempt. The receiver's failures are the delivery's to retry (its own
 * next attempt time), not the job's; only failures of ours fail the job: docs/webhooks.md, "Delivery, retries and
 * disabling" and "Ordering".
 */
async function deliver(runtime: WebhookWorkerDeps, deliveryId: string, job: JobContext): Promise<void> {
  const connection = runtime.database.orm.em.getConnection();
  const [row] = await connection.execute<DeliveryRow[]>(
    `select d.id, d.status, d.event_id, d.event_type, d.body, d.attempts, d.created_at, d.endpoint_id,
            w.url, w.enabled, w.secret, w.previous_secret, w.previous_secret_expires_at, w.failing_since
       from webhook_delivery d join webhook_endpoint w on w.id = d.endpoint_id where d.id = ?`,
    [deliveryId],
  );
  // Gone with its endpoint, or already sent by an earlier run of this job.
  if (!row || row.status !== WebhookDeliveryStatus.SENDING) return;
  const sentAt = runtime.clock.now();
  const headers = deliveryHeaders({ eventId: row.event_id, eventType: row.event_type, deliveryId: row.id }, row.body, signingSecrets(runtime, row, sentAt), sentAt);
  const outcome = await sendWebhook({
    url: row.url,
    body: row.body,
    headers,
    timeoutMs: runtime.config.webhooks.timeoutMs,
    allowPrivateTargets: runtime.config.webhooks.allowPrivateTargets,
    signal: job.signal,
  });
  // A stop interrupted it: the job is retried after the restart, the delivery still SENDING.
  if (job.signal.aborted) return;
  await recordAttempt(runtime, row, { ...outcome, sentAt, headers: { ...headers, 'Content-Length': String(Buffer.byteLength(row.body)) } }, job.log);
}

/** What an attempt sent (the body is the delivery's) and got. */
type AttemptRecord = WebhookOutcome & { sentAt: Date; headers: Record<string, string> };

async function recordAttempt(runtime: WebhookWorkerDeps, row: DeliveryRow, outcome: AttemptRecord, log: FastifyBaseLogger): Promise<void> {
  const now = runtime.clock.now();
  const succeeded = outcome.error === null;
  const attempts = row.attempts + 1;
  const nextAttemptAt = succeeded ? null : nextAttemptAfterFailure(new Date(row.created_at), now, attempts, Math.random());
  const status = succeeded ? WebhookDeliveryStatus.SUCCEEDED : nextAttemptAt ? WebhookDeliveryStatus.PENDING : WebhookDeliveryStatus.FAILED;
  const isPing = row.event_type === PING_EVENT_TYPE;
  await runtime.database.orm.em.fork().transactional(async (tx) => {
    const trx = tx.getTransactionContext<Knex.Transaction>();
    const connection = tx.getConnection();
    // The attempt's own row rides in the same statement (docs/webhooks.md, "The delivery log").
    await connection.execute(
      `with changed as (
         update webhook_delivery set status = ?, attempts = ?, next_attempt_at = ?, last_attempt_at = ?, last_status_code = ?, last_latency_ms = ?,
                last_response_excerpt = ?, last_error = ?, delivered_at = ? where id = ? and status = ? returning id)
       insert into webhook_delivery_attempt (delivery_id, number, attempted_at, request_headers, status_code, latency_ms, response_excerpt, error)
       select id, ?, ?, ?::jsonb, ?, ?, ?, ? from changed`,
      [
        status, attempts, nextAttemptAt, now, outcome.status, outcome.latencyMs, outcome.excerpt, outcome.error, succeeded ? now : null, row.id, WebhookDeliveryStatus.SENDING,
        attempts, outcome.sentAt, JSON.stringify(Object.entries(outcome.headers)), outcome.status, outcome.latencyMs, outcome.excerpt, outcome.error,
      ],
      'run',
      trx,
    );
    // Pings test an endpoint: they neither mark it failing nor heal it.
    if (isPing) return;
    if (succeeded) {
      await connection.execute('update webhook_endpoint set failing_since = null where id = ? and failing_since is not null', [row.endpoint_id], 'run', trx);
      return;
    }
    const [endpoint] = await connection.execute<{ failing_since: Date }[]>(
      'update webhook_endpoint set failing_since = coalesce(failing_since, ?) where id = ? returning failing_since',
      [now, row.endpoint_id],
      'all',
      trx,
    );
    if (endpoint && now.getTime() - new Date(endpoint.failing_since).getTime() >= RETRY_WINDOW_MS) {
      const reason = `Deliveries failed for 24 hours without a success; the last: ${outcome.error ?? 'unknown'}`.slice(0, 500);
      const disabled = await connection.execute(
        'update webhook_endpoint set enabled = false, disabled_reason = ?, disabled_at = ?, updated_at = ? where id = ? and enabled returning id',
        [reason, now, now, row.endpoint_id],
        'all',
        trx,
      );
      if (disabled.length > 0) log.warn({ endpointId: row.endpoint_id }, 'webhook endpoint disabled after a day of failed deliveries');
    }
  });
  runtime.metrics?.webhookAttempts.inc({ outcome: succeeded ? 'succeeded' : status === WebhookDeliveryStatus.FAILED ? 'given_up' : 'retried' });
  runtime.metrics?.webhookLatency.observe(outcome.latencyMs / 1000);
  if (!succeeded) log.info({ deliveryId: row.id, endpointId: row.endpoint_id, status: outcome.status, error: outcome.error, attempts }, 'webhook delivery attempt failed');
  // The next delivery of this record (and this endpoint's freed slot) may go now.
  await runtime.events.announce('webhooks.pending', {});
}

/**
 * A job of ours that failed for good (dead-lettered): the delivery goes back to PENDING, due in a minute, so it is
 * never left SENDING without a job.
 */
async function releaseDelivery(runtime: WebhookWorkerDeps, deliveryId: string, failure: JobFailure): Promise<void> {
  if (!failure.final) return;
  const now = runtime.clock.now();
  await runtime.database.orm.em.getConnection().execute(
    'update webhook_delivery set status = ?, next_attempt_at = ?, last_error = ? where id = ? and status = ?',
    [WebhookDeliveryStatus.PENDING, new Date(now.getTime() + 60_000), 'An unexpected error occurred; it was logged for the operators', deliveryId, WebhookDeliveryStatus.SENDING],
  );
}

/** The delivery worker, and this process's dispatcher (which stops when `stop` is called). */
export function webhookWorkers(runtime: WebhookWorkerDeps): AnyWorker[] {
  return [
    defineWorker({
      queue: deliverQueue,
      // More slots than an endpoint may use (WEBHOOK_ENDPOINT_CONCURRENCY): a slow receiver leaves the others free.
      batchSize: 16,
      run: (payload, job) => deliver(runtime, payload.deliveryId, job),
      recordFailure: (payload, failure) => releaseDelivery(runtime, payload.deliveryId, failure),
    }),
  ];
}
