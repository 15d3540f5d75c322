import { defineModule } from '../resource-module';
import { Organization } from './organization.entity';
import { OrganizationResolver } from './organization.resolver';

export const organizationModule = defineModule({
  name: 'organization',
  entities: [Organization],
  resolvers: [OrganizationResolver],
});
