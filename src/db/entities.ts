import { Account } from '../account/account.entity';
import { ActivityEvent } from '../activity/activity-event.entity';
import { AsyncWorkRecord } from '../async-work/async-work.entity';
import { AlphaIdentity } from '../account/alpha-identity.entity';
import { BillingSubscription } from '../billing/billing-subscription.entity';
import { BetaBrand } from '../beta-brand/beta-brand.entity';
import { CompetitorScan } from '../competitor-scan/competitor-scan.entity';
import { BetaConnection } from '../oauth/beta-connection.entity';
import { OAuthSession } from '../oauth/oauth-session.entity';
import { ApiToken } from '../auth/api-token.entity';
import { LocationUpdateJob } from '../location/location-update-job.entity';
import { Location } from '../location/location.entity';
import { RateLimitEvent } from '../limits/rate-limit-event.entity';
import { UsageCounter } from '../limits/usage-counter.entity';
import { Organization } from '../organization/organization.entity';
import { IdempotencyKey } from '../post/idempotency-key.entity';
import { Post } from '../post/post.entity';
import { Review } from '../review/review.entity';
import { WebhookDelivery } from '../webhook/webhook-delivery.entity';
import { WebhookEndpoint } from '../webhook/webhook-endpoint.entity';
import { WebhookOutbox } from '../webhook/webhook-outbox.entity';

/** Every persisted entity, listed once for the ORM. */
export const entities = [
  Organization,
  Account,
  AlphaIdentity,
  OAuthSession,
  BetaConnection,
  BetaBrand,
  BillingSubscription,
  ApiToken,
  Location,
  LocationUpdateJob,
  Review,
  CompetitorScan,
  Post,
  IdempotencyKey,
  RateLimitEvent,
  UsageCounter,
  AsyncWorkRecord,
  ActivityEvent,
  WebhookEndpoint,
  WebhookDelivery,
  WebhookOutbox,
];
