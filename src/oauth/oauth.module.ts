import { defineModule } from '../resource-module';
import { AlphaConnectionResolver } from './alpha-connection.resolver';
import { BetaConnection } from './beta-connection.entity';
import { OAuthSession } from './oauth-session.entity';
import { accountConnected, accountDisconnected, accountReconnected } from './oauth.events';

/** The providers' consents: connecting alpha accounts and beta companies. */
export const oauthModule = defineModule({
  name: 'oauth',
  entities: [OAuthSession, BetaConnection],
  resolvers: [AlphaConnectionResolver],
  eventTypes: [accountConnected, accountDisconnected, accountReconnected],
});
