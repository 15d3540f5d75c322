import type { FastifyBaseLogger } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import type { Principal } from '../access/principal';
import { EVENT_IDS_PER_READ, type PresentEvents } from '../activity/event-presentation';
import { createContext } from '../context';
import type { Runtime } from '../runtime';
import { compileRoute, type CompiledRoute } from './adapter';
import { listEventsRoute } from './routes/events.routes';

/**
 * Activity events as GET /events lists them (src/activity/event-presentation.ts), by GET /events itself: its
 * operation and record, compiled as the adapter compiles them, run with `ids` for the organization, and each item
 * written as that route writes its body (JSON.stringify: the bytes of every REST writer, docs/rest-records.md). So a
 * webhook body is, to the byte, the GET /events item of its event, and a change of that route changes both.
 */

export interface EventPresenterDeps {
  schema: () => Promise<GraphQLSchema>;
  /** The process's runtime, which holds this presenter: read when events are presented, after it is built. */
  runtime: () => Runtime;
  log: FastifyBaseLogger;
}

/** The organization itself, reading its own log, as its organization token would (no event's field reads a token's flags). */
function organizationPrincipal(organizationId: string): Principal {
  return { tokenId: `service:${organizationId}`, organizationId, accountId: null, kind: 'organization', flags: { betaApi: false, citationsApi: false } };
}

interface EventItem {
  id: string;
}

export function restEventPresenter(deps: EventPresenterDeps): PresentEvents {
  // Compiled on first use: a process that sends no webhook never builds the schema for it.
  let route: Promise<CompiledRoute> | undefined;
  return async (em, organizationId, eventIds) => {
    route ??= deps.schema().then((schema) => compileRoute(schema, listEventsRoute));
    const { compiled, record } = await route;
    const principal = organizationPrincipal(organizationId);
    const presented = new Map<string, string>();
    // A page of GET /events at a time: one read of the events, and one per relation their records follow.
    for (let start = 0; start < eventIds.length; start += EVENT_IDS_PER_READ) {
      const ids = eventIds.slice(start, start + EVENT_IDS_PER_READ);
      const context = await createContext({
        runtime: deps.runtime(),
        log: deps.log,
        source: 'external_api',
        principal,
        // The caller's transaction, in an identity map of its own.
        em: em.fork({ keepTransactionContext: true }),
      });
      const result = await compiled.run(context, { ids, perPage: ids.length });
      if (result.errors?.length) {
        throw new Error(`GET /events cannot present events of organization ${organizationId}: ${result.errors.map((error) => error.message).join('; ')}`, { cause: result.errors[0] });
      }
      const { events } = record.present(result.data) as { events: EventItem[] };
      for (const event of events) presented.set(event.id, JSON.stringify(event));
    }
    return presented;
  };
}
