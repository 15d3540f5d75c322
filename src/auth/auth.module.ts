import { defineModule } from '../resource-module';
import { ApiToken } from './api-token.entity';
import { TokenResolver } from './token.resolver';
import { tokenAuthentication } from './token.service';

/** The API tokens: organization and account tokens, created, listed and revoked. */
export const authModule = defineModule({
  name: 'auth',
  entities: [ApiToken],
  resolvers: [TokenResolver],
  authentication: tokenAuthentication,
});
