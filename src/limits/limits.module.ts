import { defineModule } from '../resource-module';
import { RateLimitEvent } from './rate-limit-event.entity';
import { UsageCounter } from './usage-counter.entity';

/** The rate limits' and quotas' counters. */
export const limitsModule = defineModule({
  name: 'limits',
  entities: [RateLimitEvent, UsageCounter],
});
