import { promises as dns, type LookupAddress } from 'node:dns';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isForbiddenAddress, RESPONSE_EXCERPT_BYTES } from './webhook.rules';

/**
 * One delivery request (docs/webhooks.md, Safety). node:http rather than fetch: its `lookup` option lets the
 * connection go to the very address that was checked (a name resolving to a public address when checked and a
 * private one when connecting, DNS rebinding, cannot slip through), and it follows no redirect.
 */

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivateTargets: boolean;
  signal: AbortSignal;
}

/** What an attempt got: an answer (any status), or why none came; the excerpt is the answer's first KiB. */
export interface WebhookOutcome {
  status: number | null;
  excerpt: string | null;
  latencyMs: number;
  /** Set when the attempt failed: no answer, a refused address, a time-out, or a non-2xx status. */
  error: string | null;
}

/** Raised before any connection: the target is not one a delivery may reach. */
class RefusedTarget extends Error {}

async function checkedAddress(hostname: string, allowPrivateTargets: boolean): Promise<LookupAddress> {
  const host = hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) !== 0 ? [{ address: host, family: isIP(host) }] : await dns.lookup(host, { all: true, verbatim: true });
  if (addresses.length === 0) throw new RefusedTarget(`${hostname} does not resolve`);
  // Every address is checked, not only the one used: a name mixing public and private answers is refused.
  if (!allowPrivateTargets && addresses.some((entry) => isForbiddenAddress(entry.address))) {
    throw new RefusedTarget(`${hostname} resolves to a loopback, private, link-local or metadata address; refused`);
  }
  return addresses[0]!;
}

export async function sendWebhook(request: WebhookRequest): Promise<WebhookOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const url = new URL(request.url);
  let address: LookupAddress;
  try {
    address = await checkedAddress(url.hostname, request.allowPrivateTargets);
  } catch (error) {
    const reason = error instanceof RefusedTarget ? error.message : `${url.hostname} could not be resolved`;
    return { status: null, excerpt: null, latencyMs: elapsed(), error: reason };
  }
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [address]);
    else callback(null, address.address, address.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<WebhookOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<WebhookOutcome, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.signal.removeEventListener('abort', onAbort);
      resolve({ ...outcome, latencyMs: elapsed() });
    };
    const outgoing = client.request(url, {
      method: 'POST',
      headers: { ...request.headers, 'Content-Length': String(Buffer.byteLength(request.body)) },
      lookup,
      // Each delivery on its own connection: a pooled one could lead to an address checked for another name.
      agent: false,
    });
    const timer = setTimeout(() => {
      outgoing.destroy();
      finish({ status: null, excerpt: null, error: `no answer within ${request.timeoutMs} ms` });
    }, request.timeoutMs);
    const onAbort = () => {
      outgoing.destroy();
      finish({ status: null, excerpt: null, error: 'cancelled: the service stopped' });
    };
    request.signal.addEventListener('abort', onAbort);
    outgoing.on('error', (error: NodeJS.ErrnoException) => finish({ status: null, excerpt: null, error: `no answer: ${error.code ?? 'connection failed'}` }));
    outgoing.on('response', (answer: IncomingMessage) => {
      const status = answer.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let kept = 0;
      const done = () => {
        const excerpt = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8');
        const ok = status >= 200 && status < 300;
        // A redirect is an answer like any other non-2xx: never followed.
        finish({ status, excerpt, error: ok ? null : `the receiver answered ${status}` });
      };
      answer.on('data', (chunk: Buffer) => {
        if (kept < RESPONSE_EXCERPT_BYTES) chunks.push(chunk);
        kept += chunk.length;
        // Bounded read: past the excerpt the rest is not waited for.
        if (kept >= RESPONSE_EXCERPT_BYTES) {
          answer.destroy();
          done();
        }
      });
      answer.on('end', done);
      answer.on('error', done);
      answer.on('close', done);
    });
    outgoing.end(request.body);
  });
}
