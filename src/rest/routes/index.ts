import type { RestRoute } from '../route';
import { betaRoutes } from './beta.routes';
import { businessProfileRoutes } from './business-profile.routes';
import { citationRoutes } from './citation.routes';
import { competitorScanRoutes } from './competitor-scan.routes';
import { eventRoutes } from './events.routes';
import { oauthRoutes } from './oauth.routes';
import { locationRoutes } from './location.routes';
import { organizationRoutes } from './organization.routes';
import { postRoutes } from './post.routes';
import { reviewRoutes } from './review.routes';
import { webhookRoutes } from './webhook.routes';

/** The route table: every documented REST path. A resource adds its file here. */
export const routeTable: readonly RestRoute[] = [
  ...organizationRoutes,
  ...businessProfileRoutes,
  ...oauthRoutes,
  ...locationRoutes,
  ...citationRoutes,
  ...postRoutes,
  ...reviewRoutes,
  ...betaRoutes,
  ...competitorScanRoutes,
  ...eventRoutes,
  ...webhookRoutes,
];
