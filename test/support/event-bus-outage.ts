import { describeErrors, FaultLedger, requestErrors, type CapturedLog, captureLog } from './faults';
import { createOrganizationFixture, type OrganizationFixture } from './fixtures';
import { graphql, http } from './http';
import { eventually, pollPost, sandboxOf } from './posts';
import { startTestStack, type TestStack } from './stack';
import { postProbe, subscribe, updateJobProbe, type Recorder } from './ws';

/**
 * The fault "the event bus down" (issue 15, Build 9), one scenario for both backends: the bus of a running service
 * is cut off (its connections lost and new ones refused, or its connections left open with nothing answering) and
 * kept down; meanwhile writes must answer their success
 * (the announcements after their commits are best effort), and their jobs still end (workers poll when no wake-up
 * comes); once the bus is back, the subscriptions opened before the outage receive events again, every event once;
 * a dashboard that reconnects reads the current state by query; and the bus holds its two connections again.
 */
export interface BusOutage {
  /** Variables the service needs to use this bus (REDIS_URL of the test's proxy). */
  env: Record<string, string>;
  /** Called once the service runs. */
  attach(t: TestStack, log: CapturedLog): Promise<void>;
  /** Cuts the bus off and keeps it so; resolves once the bus has tried to come back and been refused. */
  cut(): Promise<void>;
  /** Whether `cut` keeps the bus down until `restore` (else the bus may come back on its own at once). */
  readonly holdsDown: boolean;
  /**
   * refused: the bus's connections are lost and new ones refused (a stopped server): publishes fail at once.
   * silent: connections stay open and nothing answers (a network dropping packets): publishes never finish.
   */
  readonly kind: 'refused' | 'silent';
  /** Lets the bus come back. */
  restore(): Promise<void>;
  /** The service's bus connections now. */
  connections(): Promise<{ listen: number; publish: number }>;
  /** The faults injected, for the note. */
  figures(): string;
  close(): Promise<void>;
}

const POST_UPDATED = 'subscription ($locationId: ID) { postUpdated(locationId: $locationId) { id state version } }';
const JOB_UPDATED = 'subscription ($locationId: ID) { locationUpdateJobUpdated(locationId: $locationId) { id status version } }';

type PostEvent = { postUpdated: { id: string; state: string; version: number } };
type JobEvent = { locationUpdateJobUpdated: { id: string; status: string; version: number } };

/** Every event of one record at most once: (id, version) pairs never repeat. */
function duplicates(events: { id: string; version: number }[]): number {
  const seen = new Set(events.map((event) => `${event.id}:${event.version}`));
  return events.length - seen.size;
}

export function eventBusOutageSuite(title: string, makeOutage: () => Promise<BusOutage>): void {
  describe(title, () => {
    const log = captureLog();
    const ledger = new FaultLedger();
    let outage: BusOutage;
    let t: TestStack;
    let org: OrganizationFixture;
    let accountId: string;
    let postLocation: string;
    let updateLocation: string;
    let revokable: { id: string; token: string };
    let posts: Recorder<PostEvent>;
    let jobs: Recorder<JobEvent>;
    let revokedSubscriber: Recorder<PostEvent>;
    const recorders: Recorder<unknown>[] = [];
    /** What was written while the bus was down. */
    const duringOutage = { posts: [] as string[], updateJobs: [] as string[] };
    const figures = { revokedSocketClosed: 'not checked', writes: 0, lostAnnouncements: 0, notWaitedFor: 0, resumedProbes: 0, eventsAfter: 0, duplicates: 0, connections: '', stuck: -1 };
    const notWaitedFor = () => log.count((line) => /the change goes on without waiting for its event/.test(line.msg));

    const restPost = (summary: string) =>
      ledger.rest(
        'POST /post',
        () => http(t.url, 'POST', `/post?account_id=${accountId}`, { token: org.token, body: { location_id: postLocation, params: { summary, topicType: 'STANDARD' } } }),
        { success: [202] },
      );
    const restPatch = (description: string) =>
      ledger.rest(
        'PATCH /location/update',
        () => http(t.url, 'PATCH', `/location/update?account_id=${accountId}&location_id=${updateLocation}`, { token: org.token, body: { description } }),
        { success: [200] },
      );
    const finishedUpdate = (id: string) =>
      eventually(async () => {
        const answer = await http(t.url, 'GET', `/location/updates?account_id=${accountId}&id=${id}`, { token: org.token });
        const status = answer.body.payload?.updates?.[0]?.status as string | undefined;
        return status === 'SUCCEEDED' || status === 'FAILED' ? status : undefined;
      }, 60000, `update ${id} to finish`);

    /** A subscription opened before the outage receives a probe again: the bus listens and publishes once more. */
    const resumed = (recorder: Recorder<unknown>, what: string) =>
      eventually(async () => {
        figures.resumedProbes += 1;
        return recorder.sync(500).then(
          () => true,
          () => undefined,
        );
      }, 30000, `${what} to receive events again`);

    beforeAll(async () => {
      outage = await makeOutage();
      t = await startTestStack(
        { ...outage.env, LOG_LEVEL: 'info', JOB_RETRY_DELAY_SECONDS: '1', POST_RATE_LIMIT_PER_MINUTE: '100000' },
        { log: { destination: log.destination } },
      );
      await outage.attach(t, log);
      await sandboxOf(t.url).configure({ locationEditsPerMinute: 1_000_000 });
      org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true, alphaAccounts: true });
      accountId = org.accounts[0]!.account.id;
      postLocation = org.accounts[0]!.locations[0]!.id;
      const created = await http(t.url, 'POST', `/location?account_id=${accountId}`, {
        token: org.token,
        body: { name: 'Bus Bakery', reference_id: 'bus-1', category_id: 'gcid:bakery', country_code: 'US', address: '1 Main Street', city: 'Springfield', postal: '12345', description: 'Fresh bread' },
      });
      expect(created.status).toBe(200);
      updateLocation = created.body.payload.location_id;
      await eventually(async () => {
        const answer = await http(t.url, 'GET', `/location?account_id=${accountId}&include_fields=connected`, { token: org.token });
        return answer.body.data.every((location: { connected: boolean }) => location.connected) ? true : undefined;
      }, 30000, 'the new location to be connected');
      const issued = await graphql(t.url, 'mutation ($a: ID!) { createAccountToken(accountId: $a, label: "revoked during the outage") { token apiToken { id } } }', {
        token: org.token,
        variables: { a: accountId },
      });
      revokable = { id: issued.body.data.createAccountToken.apiToken.id, token: issued.body.data.createAccountToken.token };

      const events = t.stack.runtime.events;
      const scope = { organizationId: org.organization.id, accountId, locationId: postLocation };
      posts = await subscribe<PostEvent>(t.url, org.token, POST_UPDATED, { locationId: postLocation }, postProbe(events, scope));
      jobs = await subscribe<JobEvent>(t.url, org.token, JOB_UPDATED, { locationId: updateLocation }, updateJobProbe(events, { ...scope, locationId: updateLocation }));
      revokedSubscriber = await subscribe<PostEvent>(t.url, revokable.token, POST_UPDATED, { locationId: postLocation }, postProbe(events, scope));
      // The revoked token's subscriber is expected to end (4403): it is closed apart from those checked for errors.
      recorders.push(posts, jobs);
    });

    afterAll(async () => {
      console.log(
        [
          `Fault figures: ${title}`,
          `  faults: ${outage?.figures()}`,
          `  writes while the bus was down: ${figures.writes} (${ledger.summary()})`,
          `  announcements lost (logged): ${figures.lostAnnouncements}; announcements the writes did not wait for (bus not answering): ${figures.notWaitedFor}`,
          `  after the bus came back: probes until the old subscriptions resumed ${figures.resumedProbes}, events they received ${figures.eventsAfter}, duplicates ${figures.duplicates}`,
          `  bus connections afterwards: ${figures.connections}`,
          `  the WebSocket of the token revoked during the outage (in the revoking process): ${figures.revokedSocketClosed}`,
          `  stuck records: ${figures.stuck}`,
          `  request log lines at error level: ${requestErrors(log.lines).length}`,
        ].join('\n'),
      );
      if (requestErrors(log.lines).length > 0) console.log(`Request errors logged:\n${describeErrors(log.lines)}`);
      await Promise.all([...recorders, ...(revokedSubscriber ? [revokedSubscriber] : [])].map((recorder) => recorder.close()));
      // The fault undone (a failed test may leave it on) before the service stops, then the test's own tools.
      await outage?.restore();
      await t?.close();
      await outage?.close();
    });

    afterEach(() => {
      expect(ledger.problems).toEqual([]);
      expect(requestErrors(log.lines)).toEqual([]);
    });

    it('writes answer their success while the bus is down, and their jobs still end', async () => {
      await outage.cut();
      const sentBefore = ledger.sent;
      const notWaitedBefore = notWaitedFor();
      const lostBefore = log.count((line) => /could not be published/.test(line.msg));
      const post = await restPost('Written while the bus is down');
      expect(post.outcome).toBe('success');
      const overGraphQL = await ledger.graphql('createPost', () =>
        graphql(t.url, 'mutation ($a: ID, $l: ID!) { createPost(accountId: $a, input: { locationId: $l, params: { summary: "Also while the bus is down" } }) { post { id state } } }', {
          token: org.token,
          variables: { a: accountId, l: postLocation },
        }),
      );
      expect(overGraphQL.outcome).toBe('success');
      const update = await restPatch('Changed while the bus is down');
      expect(update.outcome).toBe('success');
      const location = await ledger.rest(
        'POST /location',
        () =>
          http(t.url, 'POST', `/location?account_id=${accountId}`, {
            token: org.token,
            body: { name: 'Outage Bakery', reference_id: 'bus-2', category_id: 'gcid:bakery', country_code: 'US', address: '2 Main Street', city: 'Springfield', postal: '12345' },
          }),
        { success: [200] },
      );
      expect(location.outcome).toBe('success');
      const revoke = await ledger.graphql('revokeApiToken', () =>
        graphql(t.url, 'mutation ($id: ID!) { revokeApiToken(id: $id) { id revokedAt } }', { token: org.token, variables: { id: revokable.id } }),
      );
      expect(revoke.outcome).toBe('success');
      expect(revoke.answer!.body.data.revokeApiToken.revokedAt).toEqual(expect.any(String));
      figures.writes = ledger.sent - sentBefore;
      // Silent, no publish has failed yet (node-redis gives a command up after 5 s): the writes did not wait for one.
      if (outage.kind === 'silent') expect(log.count((line) => /could not be published/.test(line.msg))).toBe(lostBefore);
      // The revocation holds at once in this process, bus or no bus: its token answers 401, and its socket here is
      // closed once the revocation's event is known to be lost (at once when the bus refuses it; when the bus
      // does not answer, once the client gives the publish up).
      expect((await http(t.url, 'GET', `/post?account_id=${accountId}`, { token: revokable.token })).status).toBe(401);
      await eventually(async () => (revokedSubscriber.errors.length > 0 ? true : undefined), 20000, 'the revoked token’s socket to close');
      figures.revokedSocketClosed = `closed: ${JSON.stringify(revokedSubscriber.errors.map((error) => (error as { code?: number }).code ?? String(error)))}`;
      expect(revokedSubscriber.errors).toEqual([expect.objectContaining({ code: 4403 })]);

      duringOutage.posts.push(post.answer!.body.payload.id, overGraphQL.answer!.body.data.createPost.post.id);
      duringOutage.updateJobs.push(update.answer!.body.payload.id);
      // No wake-up reaches the workers: they find the jobs at their next poll.
      for (const id of duringOutage.posts) expect((await pollPost(t.url, org.token, accountId, id, undefined, 60000)).state).toBe('LIVE');
      for (const id of duringOutage.updateJobs) expect(await finishedUpdate(id)).toBe('SUCCEEDED');
      // The location created while the bus was down is published by its job all the same.
      const locationId = location.answer!.body.payload.location_id as string;
      await eventually(async () => {
        const answer = await http(t.url, 'GET', `/location?account_id=${accountId}&include_fields=connected&per_page=250`, { token: org.token });
        return answer.body.data.some((item: { id: string; connected: boolean }) => item.id === locationId && item.connected) ? true : undefined;
      }, 60000, 'the location created during the outage to be connected');
      figures.lostAnnouncements = log.count((line) => /could not be published/.test(line.msg));
      figures.notWaitedFor = notWaitedFor() - notWaitedBefore;
      // A refused publish fails at once; a silent one is not waited for: either way the writes went on without it.
      if (outage.holdsDown && outage.kind === 'refused') expect(figures.lostAnnouncements).toBeGreaterThan(0);
      if (outage.kind === 'silent') expect(figures.notWaitedFor).toBeGreaterThan(0);
      for (const recorder of recorders) expect(recorder.errors).toEqual([]);
    });

    it('the subscriptions opened before the outage receive events again, each once, when the bus is back', async () => {
      await outage.restore();
      await resumed(posts, 'postUpdated');
      await resumed(jobs, 'locationUpdateJobUpdated');
      const postsBefore = posts.events.length;
      const jobsBefore = jobs.events.length;

      const post = await restPost('Written after the bus came back');
      expect(post.outcome).toBe('success');
      const postId = post.answer!.body.payload.id as string;
      const update = await restPatch('Changed after the bus came back');
      expect(update.outcome).toBe('success');
      const jobId = update.answer!.body.payload.id as string;

      await eventually(async () => (posts.events.some((event) => event.postUpdated.id === postId && event.postUpdated.state === 'LIVE') ? true : undefined), 30000, 'the new post LIVE at the old subscription');
      await eventually(async () => (jobs.events.some((event) => event.locationUpdateJobUpdated.id === jobId && event.locationUpdateJobUpdated.status === 'SUCCEEDED') ? true : undefined), 30000, 'the new update SUCCEEDED at the old subscription');
      // Every event published before this probe has arrived: nothing more of the new records is on its way.
      await posts.sync();
      await jobs.sync();
      const newPostEvents = posts.events.slice(postsBefore).map((event) => event.postUpdated).filter((event) => event.id === postId);
      const newJobEvents = jobs.events.slice(jobsBefore).map((event) => event.locationUpdateJobUpdated).filter((event) => event.id === jobId);
      expect(newPostEvents.map((event) => event.state)).toEqual(['SENDING', 'LIVE']);
      expect(newJobEvents.map((event) => event.status)).toEqual(['QUEUED', 'RUNNING', 'SUCCEEDED']);
      figures.eventsAfter = posts.events.length - postsBefore + jobs.events.length - jobsBefore;
      figures.duplicates =
        duplicates(posts.events.map((event) => event.postUpdated)) + duplicates(jobs.events.map((event) => event.locationUpdateJobUpdated));
      expect(figures.duplicates).toBe(0);
      for (const recorder of recorders) expect(recorder.errors).toEqual([]);
    });

    it('a dashboard that reconnects reads the current state by query, and follows new changes', async () => {
      const read = await ledger.graphql('dashboard reads', () =>
        graphql(
          t.url,
          `query ($a: ID, $p1: ID!, $p2: ID!, $j: ID!) { first: post(accountId: $a, id: $p1) { id state } second: post(accountId: $a, id: $p2) { id state }
            update: locationUpdateJob(accountId: $a, id: $j) { id status } }`,
          { token: org.token, variables: { a: accountId, p1: duringOutage.posts[0], p2: duringOutage.posts[1], j: duringOutage.updateJobs[0] } },
        ),
      );
      expect(read.outcome).toBe('success');
      expect(read.answer!.body.data).toEqual({
        first: { id: duringOutage.posts[0], state: 'LIVE' },
        second: { id: duringOutage.posts[1], state: 'LIVE' },
        update: { id: duringOutage.updateJobs[0], status: 'SUCCEEDED' },
      });
      const events = t.stack.runtime.events;
      const fresh = await subscribe<PostEvent>(t.url, org.token, POST_UPDATED, { locationId: postLocation }, postProbe(events, { organizationId: org.organization.id, accountId, locationId: postLocation }));
      recorders.push(fresh);
      const post = await restPost('Followed by the reconnected dashboard');
      const postId = post.answer!.body.payload.id as string;
      await eventually(async () => (fresh.events.some((event) => event.postUpdated.id === postId && event.postUpdated.state === 'LIVE') ? true : undefined), 30000, 'the reconnected dashboard to see the post LIVE');
      // The revoked token cannot open a dashboard again.
      await expect(
        subscribe(t.url, revokable.token, POST_UPDATED, { locationId: postLocation }, postProbe(events, { organizationId: org.organization.id, accountId, locationId: postLocation })),
      ).rejects.toThrow(/4403|Forbidden|subscription failed/);
    });

    it('the bus holds one listening and one publishing connection again, and no record is left unfinished', async () => {
      await eventually(async () => {
        const now = await outage.connections();
        figures.connections = `listen ${now.listen}, publish ${now.publish}`;
        return now.listen === 1 && now.publish === 1 ? true : undefined;
      }, 30000, 'the bus to hold one connection of each kind').catch((error: Error) => {
        throw new Error(`${error.message}: ${figures.connections}`);
      });
      const stuck = await t.em().getConnection().execute<{ n: string }[]>(
        `select (select count(*) from post where state in ('SENDING', 'PROCESSING')) + (select count(*) from location_update_job where status in ('QUEUED', 'RUNNING')) as n`,
      );
      figures.stuck = Number(stuck[0]!.n);
      expect(figures.stuck).toBe(0);
      expect(requestErrors(log.lines)).toEqual([]);
    });
  });
}
