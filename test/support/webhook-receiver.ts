import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One webhook request as the receiver read it. */
export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  json: { id: string; type: string; endpoint_id?: string; record_id?: string; sequence?: string; record?: { state?: string } };
}

/**
 * A webhook receiver for tests: a real node:http server on 127.0.0.1 (allowed as a target by
 * WEBHOOK_ALLOW_PRIVATE_TARGETS), recording every request, answering each as `answer` says (200 by default), and
 * resolving whoever waits for a request, so tests wait for what arrives, never for a fixed time.
 */
export class WebhookReceiver {
  readonly requests: ReceivedWebhook[] = [];
  answer: (request: ReceivedWebhook, response: ServerResponse) => void = (_request, response) => response.end('ok');
  private readonly hanging = new Set<ServerResponse>();
  private waiters: { matches: (request: ReceivedWebhook) => boolean; resolve: (request: ReceivedWebhook) => void }[] = [];
  private server!: Server;
  url!: string;

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const received: ReceivedWebhook = { headers: request.headers, body, json: JSON.parse(body) as ReceivedWebhook['json'] };
        this.requests.push(received);
        this.answer(received, response);
        this.waiters = this.waiters.filter((waiter) => (waiter.matches(received) ? (waiter.resolve(received), false) : true));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  /** Answers nothing (until the receiver closes): the sender times out. */
  hang(response: ServerResponse): void {
    this.hanging.add(response);
  }

  ofType(type: string): ReceivedWebhook[] {
    return this.requests.filter((request) => request.json.type === type);
  }

  /** The `count`-th request (1-based) matching `matches`, already received or still to come. */
  nth(matches: (request: ReceivedWebhook) => boolean, count = 1): Promise<ReceivedWebhook> {
    let seen = this.requests.filter(matches).length;
    const found = this.requests.filter(matches)[count - 1];
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => {
      this.waiters.push({ matches: (request) => matches(request) && (seen += 1) === count, resolve });
    });
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
