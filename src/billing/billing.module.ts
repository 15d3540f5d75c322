import { defineModule } from '../resource-module';
import { BillingSubscription } from './billing-subscription.entity';

/** The organization's subscription, counted in connected locations. */
export const billingModule = defineModule({
  name: 'billing',
  entities: [BillingSubscription],
});
