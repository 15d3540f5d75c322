import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { projectQuotaPatchShape } from './project-quota';
import { scriptedFailureSchema, type ScriptedFailure } from './scripted-failures';

/** The settings every sandbox's PUT /_control/config takes; each adds its own. */
export const commonConfigPatchShape = {
  latencyMs: z.number().int().min(0).max(600_000).optional(),
  rejectMarker: z.string().min(1).nullable().optional(),
  accessTokenTtlSeconds: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .optional(),
  oauthClients: z
    .array(z.strictObject({ clientId: z.string().min(1).max(200), clientSecret: z.string().min(1).max(200) }))
    .max(20)
    .refine((clients) => new Set(clients.map((client) => client.clientId)).size === clients.length, {
      message: 'clientIds must differ',
    })
    .optional(),
  ...projectQuotaPatchShape,
};

/** What the common controls act on. */
export interface ControlledStore<Patch> {
  reset(): void;
  configure(patch: Patch): unknown;
  addFailure(failure: ScriptedFailure): void;
  snapshot(): { failures: ScriptedFailure[] };
}

/** Whether a socket's peer is this machine: 127.0.0.0/8 or ::1, also written as an IPv4-mapped IPv6 address. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  if (address === '::1') return true;
  const v4 = address.toLowerCase().startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

export const CONTROLS_ON_LOOPBACK_ONLY = 'The sandbox controls answer only requests from this machine (a loopback address).';

/** Whether the request is for one of the controls (a route under /_control, whichever prefix the plugin has). */
function isControlRoute(request: FastifyRequest): boolean {
  return /\/_control(\/|$)/.test(request.routeOptions.url ?? '');
}

/**
 * The controls reset the provider, script its failures and add people who can consent: whoever reaches them rules
 * the sandbox, and they have no authentication. So they answer only a peer on this machine, told by the socket's
 * address (a header such as X-Forwarded-For is anyone's to write); `refuse` answers any other peer, in the sandbox's
 * own error shape. Call it before the plugin registers its routes: the hook then guards every control, the
 * sandbox's own ones included. The provider's API stays open to any peer, as the provider's is.
 */
export function answerControlsOnlyOnLoopback(app: FastifyInstance, refuse: (reply: FastifyReply) => FastifyReply): void {
  app.addHook('onRequest', async (request, reply) => {
    if (isControlRoute(request) && !isLoopbackAddress(request.socket.remoteAddress)) return refuse(reply);
  });
}

/**
 * reset, config, fail and state under /_control: for tests and demonstrations, not part of the provider's API, hence
 * no authentication (and only on loopback: answerControlsOnlyOnLoopback). `refuse` answers a body its schema refused, in the sandbox's own error shape.
 */
export function registerCommonControls<Patch>(
  app: FastifyInstance,
  store: ControlledStore<Patch>,
  configPatchSchema: z.ZodType<Patch>,
  refuse: (reply: FastifyReply, error: z.ZodError) => FastifyReply,
): void {
  app.post('/_control/reset', async () => {
    store.reset();
    return store.snapshot();
  });
  app.put<{ Body: unknown }>('/_control/config', async (request, reply) => {
    const patch = configPatchSchema.safeParse(request.body ?? {});
    if (!patch.success) return refuse(reply, patch.error);
    return store.configure(patch.data);
  });
  app.post<{ Body: unknown }>('/_control/fail', async (request, reply) => {
    const failure = scriptedFailureSchema.safeParse(request.body);
    if (!failure.success) return refuse(reply, failure.error);
    store.addFailure(failure.data);
    return { failures: store.snapshot().failures };
  });
  app.get('/_control/state', async () => store.snapshot());
}

export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`).join('; ');
}

/** Fastify's own refusals (bad JSON, a body too large) keep their 4xx status; anything else is our failure, a 500. */
export function answerStatusOf(error: FastifyError): number {
  return error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
}
