import { defineModule } from '../resource-module';
import { RateLimitEvent } from './rate-limit-event.entity';
import { UsageCounter } from './usage-counter.entity';
import { BulkTurn, ProviderBudgetRow } from './provider-budget.entity';

/** The rate limits' and quotas' counters, and the providers' budgets. */
export const limitsModule = defineModule({
  name: 'limits',
  entities: [RateLimitEvent, UsageCounter, ProviderBudgetRow, BulkTurn],
});
