import { randomBytes } from 'node:crypto';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { newId } from '../shared/ids';
import { sendWebhook } from '../webhook/webhook-sender';
import { deliveryHeaders } from '../webhook/webhook-signature';
import { newWebhookSecret } from '../webhook/webhook.rules';
import { CommandFailed } from './cli-errors';
import type { Service } from './service';

/**
 * `webhooks listen` (docs/webhooks.md, "Developing locally"): the organization's events, streamed from the running
 * service over its own graphql-ws subscription (`eventStream`; no inbound connection), each POSTed to a local URL as a
 * delivery would be: the same body (the service presents it, `webhookBody`), the same headers, signed with this
 * session's secret. One at a time, in the order they come, so a record's events keep their order.
 */

export interface ListenOptions {
  forwardTo: string;
  /** GraphQL's keys of the types (POST_STATE_CHANGED); null: every type. */
  types: string[] | null;
  /** What the printed line says is forwarded. */
  typesLabel: string;
  /** The secret to sign with (--secret); default a new one, printed. */
  secret: string | undefined;
  timeoutMs: number;
  /** Where the lines go (stdout), and where problems go (stderr). */
  out(line: string): void;
  err(line: string): void;
}

interface StreamResult {
  data?: { eventStream: { event: { id: string; webhookBody: string } | null } } | null;
  errors?: readonly { message: string }[];
}

/** Why the stream ended, in one line: the service's refusal, or the connection's. */
function reasonOf(error: unknown, service: Service): string {
  if (Array.isArray(error)) return (error as { message: string }[]).map((item) => item.message).join('; ');
  const close = error as { code?: number; reason?: string };
  if (close.code === 4403) return 'The service refused the token (missing, unknown or revoked): --token or LISTINGS_TOKEN names an organization token';
  if (typeof close.code === 'number') return `The service closed the connection (${close.code}${close.reason ? ` ${close.reason}` : ''})`;
  return `Cannot reach the service at ${service.url}: is it running (npm start)? --url names another`;
}

/** Runs until `stop` is aborted (Ctrl-C, SIGTERM): 0; or until the service ends the stream for good: a CommandFailed. */
export async function listen(service: Service, options: ListenOptions, stop: AbortSignal): Promise<number> {
  const secret = options.secret ?? newWebhookSecret();
  let connectedOnce = false;
  let listening = false;
  let ready = false;
  const client: Client = createClient({
    url: `${service.url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${service.token}` },
    // Once connected, a lost connection is retried for as long as this runs; a first connection that fails, or a
    // refused token, ends at once.
    retryAttempts: Number.MAX_SAFE_INTEGER,
    shouldRetry: (closeEvent) => connectedOnce && (closeEvent as { code?: number }).code !== 4403,
    on: {
      connected: () => (connectedOnce = true),
      closed: () => {
        if (!listening || stop.aborted) return;
        listening = false;
        options.err('Lost the connection to the service; reconnecting. Events meanwhile are not forwarded (GET /events lists them).');
      },
    },
  });
  // Each subscription its own group on the service (src/graphql/subscription-groups.ts), so its first message is its own.
  const operation = `WebhooksListen_${randomBytes(6).toString('hex')}`;
  let forwarding: Promise<void> = Promise.resolve();
  const forward = (body: string) => {
    const { id, type } = JSON.parse(body) as { id: string; type: string };
    const sentAt = new Date();
    return sendWebhook({
      url: options.forwardTo,
      body,
      headers: deliveryHeaders({ eventId: id, eventType: type, deliveryId: newId() }, body, [secret], sentAt),
      timeoutMs: options.timeoutMs,
      allowPrivateTargets: true,
      signal: stop,
    }).then((outcome) => {
      const answer = outcome.status === null ? (outcome.error ?? 'no answer') : String(outcome.status);
      options.out(`${sentAt.toISOString()}  ${type}  ${id}  POST ${options.forwardTo}  ${answer}  ${outcome.latencyMs} ms`);
    });
  };
  try {
    return await new Promise<number>((resolve, reject) => {
      const unsubscribe = client.subscribe<StreamResult['data']>(
        { query: `subscription ${operation}($types: [EventType!]) { eventStream(types: $types) { event { id webhookBody } } }`, variables: { types: options.types } },
        {
          next: (result: StreamResult) => {
            if (result.errors?.length) {
              const messages = result.errors.map((error) => error.message).join('; ');
              // Before it listens, the service refused the stream itself (an account token, say): that ends the command.
              if (!ready) reject(new CommandFailed(messages));
              else options.err(`An event could not be read: ${messages}`);
              return;
            }
            const event = result.data?.eventStream.event;
            if (!event) {
              // The stream listens: at the start, and again after a reconnection.
              if (ready) options.out('Listening again.');
              else options.out(`Ready! Your webhook signing secret is ${secret} (^C to quit)\nForwarding ${options.typesLabel} to ${options.forwardTo}`);
              ready = true;
              listening = true;
              return;
            }
            // A receiver's failure is printed on its line, and the next event goes on.
            forwarding = forwarding
              .then(() => forward(event.webhookBody))
              .catch((error: unknown) => options.err(`Event ${event.id} could not be forwarded: ${(error as Error).message}`));
          },
          error: (error) => reject(new CommandFailed(reasonOf(error, service))),
          complete: () => reject(new CommandFailed('The service ended the stream')),
        },
      );
      const end = () => {
        unsubscribe();
        resolve(0);
      };
      if (stop.aborted) end();
      else stop.addEventListener('abort', end, { once: true });
    });
  } finally {
    await forwarding;
    await client.dispose();
  }
}
