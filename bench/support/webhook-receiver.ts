/**
 * The webhook receiver of bench/webhooks, run as its own process (`node dist-dev/bench/support/webhook-receiver.js`,
 * forked with an IPC channel and exit-with-parent.js preloaded by bench/support/webhook-receiver-control.ts), so its
 * CPU is its own and not the benchmark's. A plain node:http server on 127.0.0.1: each request is read whole, stamped
 * on arrival, its `Listings-Signature` verified with the endpoint's secret (the service's own verification, as
 * docs/webhooks.md shows clients), and answered 204 at once. Arrivals go to the parent in batches.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { verifySignature } from '../../src/webhook/webhook-signature';

/** One request as the receiver saw it. */
export interface Arrival {
  /** Wall clock (ms since the epoch, sub-millisecond) when the body was read whole. */
  at: number;
  eventId: string;
  type: string;
  recordId: string | undefined;
  sequence: string | undefined;
  /** The body's `occurred_at` (ms since the epoch). */
  occurredAt: number | undefined;
  /** `record.update_time` (ms since the epoch): stamped by the flush just before the change commits; null at a creation. */
  updateTime: number | undefined;
  state: string | undefined;
  summary: string | undefined;
  signatureValid: boolean;
}

export type ReceiverCommand = { type: 'secret'; secret: string } | { type: 'stop' };
export type ReceiverReply = { type: 'listening'; port: number } | { type: 'arrivals'; arrivals: Arrival[] };

interface Body {
  id?: string;
  type?: string;
  record_id?: string;
  sequence?: string;
  occurred_at?: number;
  /** The post as GET /post/{id} writes it (docs/webhooks.md). */
  record?: { update_time?: number | null; state?: string; params?: { summary?: string } };
}

const stamp = (ms: number | null | undefined) => (typeof ms === 'number' ? ms : undefined);

let secret: string | undefined;
let batch: Arrival[] = [];

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    // Sub-millisecond wall clock: Date.now() would round every delay down to the millisecond.
    const at = performance.timeOrigin + performance.now();
    const raw = Buffer.concat(chunks).toString('utf8');
    const header = request.headers['listings-signature'];
    const signatureValid = secret !== undefined && typeof header === 'string' && verifySignature(header, raw, secret, Date.now() / 1000);
    let body: Body = {};
    try {
      body = JSON.parse(raw) as Body;
    } catch {
      // Counted as an arrival without an event id: the report shows it.
    }
    batch.push({
      at,
      eventId: body.id ?? String(request.headers['listings-event-id'] ?? ''),
      type: body.type ?? '',
      recordId: body.record_id,
      sequence: body.sequence,
      occurredAt: stamp(body.occurred_at),
      updateTime: stamp(body.record?.update_time),
      state: body.record?.state,
      summary: body.record?.params?.summary,
      signatureValid,
    });
    // Answered 2xx whatever the signature: a failure here is a figure of the run, not a retry to provoke.
    response.statusCode = 204;
    response.end();
  });
});

// Batched: one IPC message per 20 ms rather than one per request keeps the receiver's own cost low.
setInterval(() => {
  if (batch.length === 0) return;
  process.send?.({ type: 'arrivals', arrivals: batch } satisfies ReceiverReply);
  batch = [];
}, 20);

server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'listening', port: (server.address() as AddressInfo).port } satisfies ReceiverReply);
});

process.on('message', (command: ReceiverCommand) => {
  if (command.type === 'secret') secret = command.secret;
  else if (command.type === 'stop') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
