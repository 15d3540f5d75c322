import { ActivityEvent } from '../activity/activity-event.entity';
import { startEventRetention } from '../activity/event-retention';
import { defineModule } from '../resource-module';
import { ActivityListener } from './activity-listener.entity';
import { ActivityLogResolver } from './activity-log.resolver';

/** The activity log: every state change the modules record, kept for EVENT_RETENTION_DAYS (docs/activity-log.md). */
export const activityModule = defineModule({
  name: 'activity',
  entities: [ActivityEvent, ActivityListener],
  resolvers: [ActivityLogResolver],
  // Where the jobs run: one process kind sweeps, the API processes need not.
  services: async (runtime, log) => {
    const stop = startEventRetention(runtime, log);
    return [{ name: 'the activity log retention', stop }];
  },
});
