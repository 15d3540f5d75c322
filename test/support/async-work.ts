import { randomUUID } from 'node:crypto';
import type { EventBus } from '../../src/events/event-bus';
import { AsyncWorkStatus, type AsyncWorkKind } from '../../src/jobs/work-ledger';
import { graphql } from './http';
import { eventually } from './posts';
import type { Probe } from './ws';

/** One unit of work as `asyncWork` lists it (docs/async-work.md), its own fields only. */
export interface WorkNode {
  id: string;
  kind: AsyncWorkKind;
  status: string;
  attempts: number;
  maxAttempts: number;
  error: string | null;
  /** 0 to 1 where the work knows it (docs/async-work.md); else null. */
  progress: number | null;
  organizationId: string;
  accountId: string | null;
  subjectId: string;
  retryable: boolean;
  version: number;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
}

const WORK_FIELDS = 'id kind status attempts maxAttempts error progress organizationId accountId subjectId retryable version createdAt startedAt endedAt';

/**
 * The work of one kind that `token` sees, newest first, every page of it: about `subjectId` only when given, of one
 * account when `accountId` is (passed to the query, as a client would).
 */
export async function workAbout(baseUrl: string, token: string, filter: { kind: AsyncWorkKind; subjectId?: string; accountId?: string }): Promise<WorkNode[]> {
  const nodes: WorkNode[] = [];
  let after: string | null = null;
  do {
    const answer = await graphql(
      baseUrl,
      `query ($accountId: ID, $kinds: [AsyncWorkKind!], $after: String) {
        asyncWork(accountId: $accountId, kinds: $kinds, first: 100, after: $after) { pageInfo { hasNextPage endCursor } edges { node { ${WORK_FIELDS} } } } }`,
      { token, variables: { accountId: filter.accountId, kinds: [filter.kind], after } },
    );
    if (answer.body.errors) throw new Error(`asyncWork answered errors: ${JSON.stringify(answer.body.errors)}`);
    const page = answer.body.data.asyncWork as { pageInfo: { hasNextPage: boolean; endCursor: string | null }; edges: { node: WorkNode }[] };
    nodes.push(...page.edges.map(({ node }) => node));
    after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
  } while (after);
  return filter.subjectId === undefined ? nodes : nodes.filter((node) => node.subjectId === filter.subjectId);
}

/** Until the work of `kind` about `subjectId` satisfies `done` (default: every unit of it SUCCEEDED); returns it. */
export function waitForWork(
  baseUrl: string,
  token: string,
  kind: AsyncWorkKind,
  subjectId: string,
  done: (work: WorkNode[]) => boolean = (work) => work.length > 0 && work.every((node) => node.status === 'SUCCEEDED'),
  timeoutMs = 30000,
): Promise<WorkNode[]> {
  let last: WorkNode[] = [];
  return eventually(async () => {
    last = await workAbout(baseUrl, token, { kind, subjectId });
    return done(last) ? last : undefined;
  }, timeoutMs, `${kind} work about ${subjectId}`).catch((error: Error) => {
    throw new Error(`${error.message}; last listed: ${JSON.stringify(last)}`);
  });
}

/** Asserts finished work: SUCCEEDED without an error, after at least one attempt, ended no earlier than it started. */
export function expectSucceeded(work: WorkNode): void {
  expect(work).toMatchObject({ status: 'SUCCEEDED', error: null, startedAt: expect.any(String), endedAt: expect.any(String) });
  expect(work.attempts).toBeGreaterThanOrEqual(1);
  expect(Date.parse(work.endedAt!)).toBeGreaterThanOrEqual(Date.parse(work.startedAt!));
}

/** Who a probe of asyncWorkUpdated claims to be: a unit of work of this organization and account, of this kind. */
export interface WorkProbeScope {
  organizationId: string;
  /** One account, or several (the probe is published once as each, with one id: the recorder needs one to arrive). */
  accountIds: (string | null)[];
  kind?: AsyncWorkKind;
}

/**
 * A probe for asyncWorkUpdated: a unit of work at version 0 (no real one has it) published through the real event
 * bus, which a subscription's filter lets through when it would let the scope's real work through.
 */
export function workProbe(events: EventBus, scope: WorkProbeScope): Probe {
  return {
    async send() {
      const id = randomUUID();
      const now = new Date().toISOString();
      for (const accountId of new Set(scope.accountIds)) {
        await events.publish('async-work.updated', {
          id,
          organizationId: scope.organizationId,
          accountId,
          kind: scope.kind ?? 'POST_PUBLISH',
          status: AsyncWorkStatus.QUEUED,
          subjectId: randomUUID(),
          attempts: 0,
          maxAttempts: 1,
          run: 1,
          runAttempts: 0,
          error: null,
          progress: null,
          createdAt: now,
          startedAt: null,
          endedAt: null,
          updatedAt: now,
          version: 0,
        });
      }
      return id;
    },
  };
}
