import { Account } from '../account/account.entity';
import { ApiToken } from '../auth/api-token.entity';
import { LocationUpdateJob } from '../location/location-update-job.entity';
import { Location } from '../location/location.entity';
import { RateLimitEvent } from '../limits/rate-limit-event.entity';
import { UsageCounter } from '../limits/usage-counter.entity';
import { Organization } from '../organization/organization.entity';
import { IdempotencyKey } from '../post/idempotency-key.entity';
import { Post } from '../post/post.entity';

/** Every persisted entity, listed once for the ORM. */
export const entities = [Organization, Account, ApiToken, Location, LocationUpdateJob, Post, IdempotencyKey, RateLimitEvent, UsageCounter];
