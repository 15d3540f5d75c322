import type { EntityManager } from '@mikro-orm/postgresql';
import type DataLoader from 'dataloader';
import { accountsByOrganizationLoader } from './account/account.loaders';
import { locationCountByAccountLoader } from './location/location.loaders';
import { workSubjectLoader, type WorkSubjectKey } from './async-work/async-work.loaders';
import type { Account } from './account/account.entity';
import { lastWebhookDeliveryLoader, webhookBacklogLoader } from './webhook/webhook.loaders';
import type { WebhookDelivery } from './webhook/webhook-delivery.entity';

/** The per-request DataLoaders. Each is created on first use, so a request pays only for what it follows. */
export interface Loaders {
  readonly locationCountByAccount: DataLoader<string, number>;
  readonly accountsByOrganization: DataLoader<string, Account[]>;
  readonly workSubjects: DataLoader<WorkSubjectKey, object | null, string>;
  readonly webhookBacklog: DataLoader<string, number>;
  readonly lastWebhookDelivery: DataLoader<string, WebhookDelivery | null>;
}

const factories: { [K in keyof Loaders]: (em: EntityManager) => Loaders[K] } = {
  locationCountByAccount: locationCountByAccountLoader,
  accountsByOrganization: accountsByOrganizationLoader,
  workSubjects: workSubjectLoader,
  webhookBacklog: webhookBacklogLoader,
  lastWebhookDelivery: lastWebhookDeliveryLoader,
};

export function createLoaders(em: EntityManager): Loaders {
  const created: Partial<Record<keyof Loaders, unknown>> = {};
  const loaders = {} as Loaders;
  for (const name of Object.keys(factories) as (keyof Loaders)[]) {
    Object.defineProperty(loaders, name, {
      enumerable: true,
      get: () => (created[name] ??= factories[name](em)),
    });
  }
  return loaders;
}
