import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { Account } from '../account/account.entity';
import { AccountSyncStatus } from '../account/account.enums';
import type { Principal } from '../access/principal';
import { ApiToken } from '../auth/api-token.entity';
import { BetaBrand } from '../beta-brand/beta-brand.entity';
import { BetaSyncStatus } from '../beta-brand/beta-brand.enums';
import { updateBetaBrand } from '../beta-brand/beta-brand.service';
import { RequestLoaders } from '../db/request-loaders';
import { runWithOrigin } from '../observability/origin';
import { LocationUpdateJob } from '../location/location-update-job.entity';
import { Location } from '../location/location.entity';
import { LocationUpdateStatus } from '../location/location.enums';
import { updateLocation } from '../location/location.service';
import { generateBetaConsentUrl, hasBetaCompany } from '../oauth/beta-connection.service';
import { Organization } from '../organization/organization.entity';
import type { CreatePostInput } from '../post/post.inputs';
import { Post } from '../post/post.entity';
import { ActionType, PostState, TopicType } from '../post/post.enums';
import { createPost, deletePost } from '../post/post.service';
import type { RequestScope, RequestSource } from '../request-scope';
import type { Runtime } from '../runtime';
import type { DemoProvider } from './demo.provider';
import { DEMO_ACCOUNTS } from './demo.seed';
import { OrganizationWatch } from './demo.watch';

/**
 * The demo's second half, what needs its locations at the provider first: it posts in every state, updates a
 * location twice (one update taken, one refused) and links the beta company so its brand syncs, all through the
 * services and jobs a client's requests use; a DemoProvider (the sandboxes) makes the states only a provider's
 * judgement gives. Runs where workers run (demo.preparation.ts), once per demo organization: the first post's
 * Idempotency-Key is the claim, so two processes preparing one demo make its posts once.
 */

/** How long one wait of the preparation may take before it gives up (each step that waits has its own). */
const STEP_WAIT_MS = 60_000;

/** Where the demo's beta consent sends its person back; nobody lands there (the provider's redirect is not followed). */
const BETA_RETURN_URL = 'https://example.com/demo/beta-linked';

/** The key of the demo's first post: creating it is the claim on the preparation. */
const CLAIM_KEY = 'demo-live';

type PostContent = Omit<CreatePostInput, 'locationId'>;

const DAY_MS = 24 * 3600_000;

/** What the seed's jobs still owe: locations not at the provider yet (nor refused), imports not ended. */
export async function seedWorkMissing(em: EntityManager, organizationId: string): Promise<string[]> {
  const [unpublished, importing] = await Promise.all([
    em.count(Location, { connected: false, providerError: null, account: { organization: organizationId, alphaAccountId: { $ne: null } } }),
    em.count(Account, { organization: organizationId, syncStatus: { $in: [AccountSyncStatus.QUEUED, AccountSyncStatus.RUNNING] } }),
  ]);
  return [
    ...(unpublished > 0 ? [`${unpublished} location(s) to reach the alpha provider`] : []),
    ...(importing > 0 ? [`${importing} account import(s) to end`] : []),
  ];
}

async function postsSending(em: EntityManager, organizationId: string): Promise<string[]> {
  const sending = await em.count(Post, { organization: organizationId, state: PostState.SENDING });
  return sending > 0 ? [`${sending} post(s) on their way to the provider`] : [];
}

/** What the demo's work still owes: the seed's, then posts on their way, unfinished location updates, a brand being pushed. */
export async function demoWorkMissing(em: EntityManager, organizationId: string): Promise<string[]> {
  const [seed, sending, updating, pushing] = await Promise.all([
    seedWorkMissing(em, organizationId),
    postsSending(em, organizationId),
    em.count(LocationUpdateJob, { organization: organizationId, status: { $in: [LocationUpdateStatus.QUEUED, LocationUpdateStatus.RUNNING] } }),
    em.count(BetaBrand, { organization: organizationId, betaSyncStatus: BetaSyncStatus.PENDING }),
  ]);
  return [
    ...seed,
    ...sending,
    ...(updating > 0 ? [`${updating} location update(s) to finish`] : []),
    ...(pushing > 0 ? [`${pushing} beta brand(s) to reach the beta provider`] : []),
  ];
}

/**
 * Runs a step whose work the provider refuses on purpose: its jobs carry an origin saying so (its name is their log
 * lines' reqId), and the job engine logs that refusal as one info line, not a warning with a stack (docs/jobs.md).
 */
function expectingRefusal<T>(name: string, run: () => Promise<T>): Promise<T> {
  return runWithOrigin({ requestId: name, refusalExpected: true }, run);
}

export interface PrepareDemoOptions {
  provider: DemoProvider | undefined;
  signal: AbortSignal;
  log: FastifyBaseLogger;
}

/** `prepared`: this call made the demo's posts; `taken`: they were made already (by another process, or earlier). */
export type PrepareOutcome = 'prepared' | 'taken';

export async function prepareDemo(runtime: Runtime, organizationId: string, options: PrepareDemoOptions): Promise<PrepareOutcome> {
  const { provider, signal } = options;
  const log = options.log.child({ organizationId });
  const watch = new OrganizationWatch(runtime.events, organizationId, signal);
  const fresh = () => runtime.database.orm.em.fork();
  try {
    const organization = await fresh().findOneOrFail(Organization, organizationId);
    // The services act for the organization as its own token would (the earliest organization token it has).
    const token = await fresh().findOne(ApiToken, { organization: organizationId, account: null }, { orderBy: { createdAt: 'asc' } });
    const principal: Principal = {
      tokenId: token?.id ?? organizationId,
      organizationId,
      accountId: null,
      kind: 'organization',
      flags: { betaApi: organization.betaApi, citationsApi: organization.citationsApi },
    };
    const scope = (source: RequestSource = 'app'): RequestScope<Runtime> => {
      const em = fresh();
      return { em, principal, loaders: new RequestLoaders(() => em), log, source, runtime };
    };

    await watch.until('the demo\'s seed', () => seedWorkMissing(fresh(), organizationId), STEP_WAIT_MS);

    // Its own accounts and their locations, in the seed's order.
    const accounts = await fresh().find(Account, { organization: organizationId, referenceId: { $in: DEMO_ACCOUNTS.map((plan) => plan.referenceId) } });
    const locations = await fresh().find(Location, { account: { $in: accounts.map((account) => account.id) } }, { orderBy: { referenceId: 'asc' } });
    const own = DEMO_ACCOUNTS.map((plan) => {
      const account = accounts.find((candidate) => candidate.referenceId === plan.referenceId);
      if (!account) throw new Error(`the demo account ${plan.referenceId} is missing`);
      return { account, locations: locations.filter((location) => location.account.id === account.id) };
    });
    const [downtown, lakeside] = own;
    const springfield = downtown?.locations[0];
    const shelbyville = downtown?.locations[1];
    const toronto = lakeside?.locations[0];
    if (!downtown || !lakeside || !springfield || !shelbyville || !toronto) throw new Error('the demo\'s locations are missing');

    const post = async (key: string, accountId: string, locationId: string, content: PostContent, source: RequestSource = 'app') =>
      createPost(scope(source), { accountId, idempotencyKey: key, input: { locationId, ...content } });
    /** One step of the demo; its failure is logged and the demo goes on without it. */
    const step = async (what: string, run: () => Promise<unknown>): Promise<void> => {
      try {
        await run();
      } catch (error) {
        if (signal.aborted) throw error;
        log.warn({ err: error }, `demo: ${what} failed; the demo goes on without it`);
      }
    };
    const leftSending = (postId: string) => async () => {
      const current = await fresh().findOne(Post, postId);
      return current?.state === PostState.SENDING ? [`post ${postId} to leave SENDING`] : [];
    };

    // A live post, from the REST interface: the claim. Replayed means the demo's posts were made already.
    const claim = await post(CLAIM_KEY, downtown.account.id, springfield.id, {
      params: {
        topicType: TopicType.STANDARD,
        summary: 'Pumpkin spice season is back: every latte comes with a cinnamon bun until Sunday.',
        callToAction: { actionType: ActionType.ORDER },
      },
      useLocationWebsiteUrl: true,
    }, 'external_api');
    if (claim.replayed) return 'taken';
    log.info('demo: preparing its posts, location updates and beta brand');

    const now = runtime.clock.now();
    const nextWeek = new Date(Math.ceil((now.getTime() + 7 * DAY_MS) / 3600_000) * 3600_000);
    await step('the scheduled post', () => post('demo-scheduled', downtown.account.id, springfield.id, {
      params: { summary: 'Latte art class next Saturday at 10:00: six seats, sign up at the counter.', scheduledTime: nextWeek.toISOString() },
    }));
    await step('the post of the location without a website', () => post('demo-call', downtown.account.id, shelbyville.id, {
      params: { summary: 'Catering for your office: call us for a quote.', callToAction: { actionType: ActionType.CALL } },
    }));
    await step('the Lakeside post', () => post('demo-lakeside', lakeside.account.id, toronto.id, {
      params: { summary: 'Maple latte, made with Ontario maple syrup.', callToAction: { actionType: ActionType.LEARN_MORE } },
      useLocationWebsiteUrl: true,
    }));
    if (provider) {
      await step('the rejected post', () => post('demo-rejected', downtown.account.id, springfield.id, {
        params: { summary: `Leave us five stars and your next coffee is free! ${provider.rejectMarker}` },
      }));
      await step('the refused post', () => expectingRefusal('demo-refused-post', () => post('demo-refused', downtown.account.id, springfield.id, {
        params: { summary: `Ten oat-milk drinks, one price. ${provider.refusalMarker}` },
      })));
    }
    await step('the location update', () => updateLocation(scope(), {
      accountId: downtown.account.id,
      locationId: springfield.id,
      input: { description: 'Espresso bar and bakery in the heart of Springfield, roasting our own beans since 2012.' },
    }));
    if (provider) {
      await step('the refused location update', () => expectingRefusal('demo-refused-location-update', () => updateLocation(scope(), {
        accountId: downtown.account.id,
        locationId: shelbyville.id,
        input: { description: `Shelbyville's coffee corner. ${provider.refusalMarker}` },
      })));
    }
    // A post that was live, then deleted: the provider removes it.
    await step('the deleted post', async () => {
      const { post: created } = await post('demo-deleted', downtown.account.id, springfield.id, { params: { summary: 'Closed this Monday for a private event.' } });
      await watch.until('the post to delete', leftSending(created.id), STEP_WAIT_MS);
      await deletePost(scope(), { accountId: downtown.account.id, id: created.id });
    });
    if (provider) {
      // The provider reviews it: it stays PROCESSING until the review ends.
      await step('the post under review', async () => {
        const { post: created } = await post('demo-under-review', downtown.account.id, springfield.id, {
          params: { summary: `Winter hours from December: open until 20:00 on weekdays. ${provider.reviewMarker}` },
        });
        await watch.until('the post under review', leftSending(created.id), STEP_WAIT_MS);
      });
      await step('the beta brand', () => linkAndPushBrand(scope, provider, organizationId));
    }
    await watch.until('the demo\'s work', () => demoWorkMissing(fresh(), organizationId), STEP_WAIT_MS);
    log.info('demo: prepared');
    return 'prepared';
  } finally {
    watch.close();
  }
}

/** The beta consent that links the brand's company (approved at the provider), then a change that pushes the brand. */
async function linkAndPushBrand(scope: (source?: RequestSource) => RequestScope<Runtime>, provider: DemoProvider, organizationId: string): Promise<void> {
  const brand = await scope().em.findOne(BetaBrand, { organization: organizationId, deletedAt: null }, { orderBy: { createdAt: 'asc' } });
  if (!brand || brand.betaSyncStatus === BetaSyncStatus.SYNCED) return;
  if (!(await hasBetaCompany(scope().em, organizationId, brand.betaCompanyId))) {
    const { url } = await generateBetaConsentUrl(scope(), { redirectUrl: BETA_RETURN_URL, state: 'demo' });
    await provider.approveBetaConsent(url, brand.betaCompanyId);
  }
  // Its own name again: a change like any other, pushed by the brand's sync job.
  await updateBetaBrand(scope(), brand.segmentId, { brandName: brand.brandName });
}
