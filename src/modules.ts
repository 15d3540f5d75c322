import { accountModule } from './account/account.module';
import { accountImportModule } from './account-import/account-import.module';
import { activityModule } from './activity-log/activity-log.module';
import { asyncWorkModule } from './async-work/async-work.module';
import { authModule } from './auth/auth.module';
import { betaBrandModule } from './beta-brand/beta-brand.module';
import { billingModule } from './billing/billing.module';
import { citationModule } from './citation/citation.module';
import { competitorScanModule } from './competitor-scan/competitor-scan.module';
import { limitsModule } from './limits/limits.module';
import { locationModule } from './location/location.module';
import { oauthModule } from './oauth/oauth.module';
import { organizationModule } from './organization/organization.module';
import { postModule } from './post/post.module';
import { composeModules } from './compose-modules';
import { reviewModule } from './review/review.module';
import { webhookModule } from './webhook/webhook.module';

/**
 * The composition root: every module of the service, in order (the order of the enums they contribute, and of
 * their workers' start). The only file that names them all; adding a resource adds one line here (README).
 */
export const composition = composeModules([
  organizationModule,
  accountModule,
  billingModule,
  authModule,
  limitsModule,
  asyncWorkModule,
  activityModule,
  postModule,
  locationModule,
  accountImportModule,
  oauthModule,
  competitorScanModule,
  betaBrandModule,
  reviewModule,
  citationModule,
  webhookModule,
]);
