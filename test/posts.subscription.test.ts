import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { pollPost, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';
import { postProbe, subscribe, waitUntil, type ProbeScope } from './support/ws';

let t: TestStack;
let org: OrganizationFixture;
let other: OrganizationFixture;

const POST_UPDATED = `subscription ($postId: ID, $locationId: ID) {
  postUpdated(postId: $postId, locationId: $locationId) { id state version postId locationId accountId source updateTime params { summary } }
}`;

beforeAll(async () => {
  t = await startTestStack({ POST_RATE_LIMIT_PER_MINUTE: '1000' });
  org = await createOrganizationFixture(t.em(), { accounts: 2, locationsEach: 2, connected: true });
  other = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
});
beforeEach(() => sandboxOf(t.url).reset());
afterAll(() => t.close());

/** Probes that look like a post of `fixture`'s account `account`, location `location`. */
function probeOf(fixture: OrganizationFixture, account = 0, location = 0, extra: Partial<ProbeScope> = {}) {
  return postProbe(t.stack.runtime.events, {
    organizationId: fixture.organization.id,
    accountId: fixture.accounts[account]!.account.id,
    locationId: fixture.accounts[account]!.locations[location]!.id,
    ...extra,
  });
}

function createPost(fixture: OrganizationFixture, account: number, location: number, summary: string) {
  return http(t.url, 'POST', `/post?account_id=${fixture.accounts[account]!.account.id}`, {
    token: fixture.token,
    body: { location_id: fixture.accounts[account]!.locations[location]!.id, params: { summary } },
  });
}

const idsOf = (events: { postUpdated: { id: string } }[]) => events.map((e) => e.postUpdated.id);

describe('postUpdated over graphql-ws', () => {
  it('delivers the whole post after each change, every transition in order', async () => {
    await sandboxOf(t.url).configure({ processingMs: 300 });
    const watcher = await subscribe(t.url, org.token, POST_UPDATED, {}, probeOf(org));
    try {
      const created = await createPost(org, 0, 0, 'Watched post');
      const id = created.body.payload.id;
      await pollPost(t.url, org.token, org.accounts[0]!.account.id, id, (p) => p.state === 'LIVE');
      await watcher.waitFor(3);
      const mine = watcher.events.map((e) => e.postUpdated).filter((p) => p.id === id);
      expect(mine.map((p) => p.state)).toEqual(['SENDING', 'PROCESSING', 'LIVE']);
      expect(mine.map((p) => p.version)).toEqual([1, 2, 3]);
      expect(mine[2]).toMatchObject({
        id,
        locationId: org.accounts[0]!.locations[0]!.id,
        accountId: org.accounts[0]!.account.id,
        source: 'EXTERNAL_API',
        postId: expect.stringMatching(/localPosts/),
        params: { summary: 'Watched post' },
      });
      expect(watcher.errors).toEqual([]);
    } finally {
      await watcher.close();
    }
  });

  it('delivers every event to each of many identical subscriptions (which share one execution)', async () => {
    const watchers = await Promise.all([1, 2, 3, 4, 5].map(() => subscribe(t.url, org.token, POST_UPDATED, {}, probeOf(org))));
    try {
      const created = await createPost(org, 1, 1, 'Seen by five dashboards');
      const id = created.body.payload.id;
      await pollPost(t.url, org.token, org.accounts[1]!.account.id, id, (p) => p.state === 'LIVE');
      for (const watcher of watchers) {
        await watcher.waitFor(2);
        const states = watcher.events.map((e) => e.postUpdated).filter((p) => p.id === id).map((p) => p.state);
        expect(states).toEqual(['SENDING', 'LIVE']);
      }
    } finally {
      await Promise.all(watchers.map((watcher) => watcher.close()));
    }
  });

  it('filters by locationId', async () => {
    const here = org.accounts[0]!.locations[1]!.id;
    const byLocation = await subscribe(t.url, org.token, POST_UPDATED, { locationId: here }, probeOf(org, 0, 1));
    try {
      const elsewhere = await createPost(org, 0, 0, 'Not this location');
      const mine = await createPost(org, 0, 1, 'This location');
      await pollPost(t.url, org.token, org.accounts[0]!.account.id, elsewhere.body.payload.id);
      await pollPost(t.url, org.token, org.accounts[0]!.account.id, mine.body.payload.id);
      // Both posts are terminal: every event of theirs was published before this probe.
      await byLocation.sync();
      expect(new Set(idsOf(byLocation.events))).toEqual(new Set([mine.body.payload.id]));
      expect(byLocation.events.map((e) => e.postUpdated.state)).toEqual(['SENDING', 'LIVE']);
    } finally {
      await byLocation.close();
    }
  });

  it('filters by postId', async () => {
    const first = await createPost(org, 0, 0, 'Followed');
    const second = await createPost(org, 0, 0, 'Not followed');
    const firstId = first.body.payload.id;
    await pollPost(t.url, org.token, org.accounts[0]!.account.id, firstId);
    await pollPost(t.url, org.token, org.accounts[0]!.account.id, second.body.payload.id);
    const byPost = await subscribe(t.url, org.token, POST_UPDATED, { postId: firstId }, probeOf(org, 0, 0, { postId: firstId }));
    try {
      // A change of each, after the subscription is live: only the followed post's reaches it.
      for (const id of [second.body.payload.id, firstId]) {
        expect((await http(t.url, 'DELETE', `/post/${id}?account_id=${org.accounts[0]!.account.id}`, { token: org.token })).status).toBe(202);
      }
      await pollPost(t.url, org.token, org.accounts[0]!.account.id, firstId, (p) => p.state === 'DELETED');
      await pollPost(t.url, org.token, org.accounts[0]!.account.id, second.body.payload.id, (p) => p.state === 'DELETED');
      await byPost.sync();
      expect(new Set(idsOf(byPost.events))).toEqual(new Set([firstId]));
      expect(byPost.events.map((e) => e.postUpdated.state)).toEqual(['SENDING', 'DELETED']);
    } finally {
      await byPost.close();
    }
  });

  it('ends a running subscription when its token is revoked (4403), and the token cannot subscribe again', async () => {
    const created = await graphql(t.url, `mutation ($a: ID!) { createAccountToken(accountId: $a) { token apiToken { id } } }`, {
      token: org.token,
      variables: { a: org.accounts[0]!.account.id },
    });
    const { token, apiToken } = created.body.data.createAccountToken;
    const watcher = await subscribe(t.url, token, POST_UPDATED, {}, probeOf(org));
    try {
      await graphql(t.url, `mutation { revokeApiToken(id: "${apiToken.id}") { id } }`, { token: org.token });
      await expect(watcher.waitFor(1, 10000)).rejects.toThrow(/subscription failed/);
      expect((watcher.errors[0] as { code?: number }).code).toBe(4403);

      // A fresh socket with the revoked token is refused at connection_init, so a later post reaches nobody.
      const fresh = createClient({
        url: `${t.url.replace(/^http/, 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${token}` },
        retryAttempts: 0,
      });
      const delivered: unknown[] = [];
      const refused = await new Promise<{ code?: number }>((resolve) => {
        fresh.subscribe({ query: POST_UPDATED }, { next: (value) => void delivered.push(value), error: (error) => resolve(error as { code?: number }), complete: () => resolve({}) });
      });
      expect(refused.code).toBe(4403);
      const after = await createPost(org, 0, 0, 'After revocation');
      await pollPost(t.url, org.token, org.accounts[0]!.account.id, after.body.payload.id);
      expect(delivered).toEqual([]);
      expect(watcher.events).toEqual([]);
      await fresh.dispose();
    } finally {
      await watcher.close();
    }
  });

  it('never delivers events of another organization, nor of another account to an account token', async () => {
    const outsider = await subscribe(t.url, other.token, POST_UPDATED, {}, probeOf(other));
    const otherAccount = await subscribe(t.url, org.accounts[1]!.token, POST_UPDATED, {}, probeOf(org, 1));
    const sameAccount = await subscribe(t.url, org.accounts[0]!.token, POST_UPDATED, {}, probeOf(org));
    try {
      const created = await createPost(org, 0, 0, 'Private news');
      const id = created.body.payload.id;
      // Guessing the id does not help either (its probes claim the id, in the guesser's own organization).
      const guesser = await subscribe(t.url, other.token, POST_UPDATED, { postId: id }, probeOf(other, 0, 0, { postId: id }));
      try {
        await pollPost(t.url, org.token, org.accounts[0]!.account.id, id);
        await sameAccount.waitFor(2);
        // Every event of the post was published before these probes: had one been delivered, it would be here.
        await Promise.all([outsider.sync(), otherAccount.sync(), guesser.sync()]);
        expect(outsider.events).toEqual([]);
        expect(otherAccount.events).toEqual([]);
        expect(guesser.events).toEqual([]);
        expect(idsOf(sameAccount.events)).toEqual([id, id]);
      } finally {
        await guesser.close();
      }
    } finally {
      await Promise.all([outsider.close(), otherAccount.close(), sameAccount.close()]);
    }
  });

  it("writes graphql-ws's exact next message to each socket of a group, with that socket's own id, as text", async () => {
    // Raw sockets, so the bytes are what is checked: a grouped subscription's payload is serialized once and each
    // socket's id spliced in (src/graphql/websocket.ts). Ids that JSON must escape, and three of one length, so that
    // two of them follow each other in the group whatever its order (a frame written over the previous socket's);
    // the last one ends early.
    const ids = ['a', 'b', 'quote " and \\ é \u2028', 'e'];
    const url = `${t.url.replace(/^http/, 'ws')}/graphql`;
    const frames = new Map<string, { text: string; binary: boolean }[]>(ids.map((id) => [id, []]));
    // Called at every frame: what a wait below is waiting for is checked again then.
    const arrived = new Set<() => void>();
    const sockets = await Promise.all(
      ids.map(
        (id) =>
          new Promise<WebSocket>((resolve, reject) => {
            const socket = new WebSocket(url, 'graphql-transport-ws');
            socket.once('error', reject);
            socket.on('message', (data: Buffer, binary: boolean) => {
              const text = data.toString('utf8');
              const message = JSON.parse(text) as { type: string };
              if (message.type === 'connection_ack') {
                socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query: POST_UPDATED } }));
                resolve(socket);
              } else {
                frames.get(id)!.push({ text, binary });
                for (const check of arrived) check();
              }
            });
            socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${org.token}` } })));
          }),
      ),
    );
    try {
      const probe = probeOf(org);
      const nexts = (id: string) => frames.get(id)!.filter((frame) => frame.text.includes('"type":"next"'));
      const got = (id: string, probeId: string) => nexts(id).some((frame) => frame.text.includes(probeId));
      const nothingFailed = () => undefined;
      // Not acknowledged by graphql-ws: probes (every 100 ms) until every socket got one.
      await waitUntil(arrived, () => ids.every((id) => nexts(id).length > 0), nothingFailed, 'a next frame on every socket', 20_000, () => void probe.send());
      const last = ids[3]!;
      sockets[3]!.send(JSON.stringify({ id: last, type: 'complete' }));
      // The completed id gets nothing more; the others get the next events, ordered after the earlier ones. The
      // group writes an event to all its sockets in one pass: once the others have the second probe, a frame for
      // the completed id would have come before it.
      const counts = ids.map((id) => nexts(id).length);
      const probeId = await probe.send();
      const laterProbeId = await probe.send();
      await waitUntil(arrived, () => ids.slice(0, 3).every((id) => got(id, probeId) && got(id, laterProbeId)), nothingFailed, 'both probes on the open sockets', 20_000);
      const payloads = new Set<string>();
      for (const id of ids) {
        for (const frame of nexts(id)) {
          const message = JSON.parse(frame.text) as { id: string; type: string; payload: unknown };
          // Byte for byte what graphql-ws's own JSON.stringify({ id, type, payload }) makes, in a text frame.
          expect(frame.text).toBe(JSON.stringify({ id, type: 'next', payload: message.payload }));
          expect(frame.binary).toBe(false);
          payloads.add(JSON.stringify(message.payload));
        }
      }
      expect(nexts(ids[0]!).map((frame) => JSON.parse(frame.text).payload)).toEqual(nexts(ids[1]!).map((frame) => JSON.parse(frame.text).payload));
      expect(nexts(last)).toHaveLength(counts[3]!);
      expect(frames.get(last)!.some((frame) => frame.text.includes(probeId) || frame.text.includes(laterProbeId))).toBe(false);
    } finally {
      await Promise.all(
        sockets.map((socket) => new Promise<void>((resolve) => (socket.readyState === WebSocket.CLOSED ? resolve() : (socket.once('close', () => resolve()), socket.close())))),
      );
    }
  });
});
