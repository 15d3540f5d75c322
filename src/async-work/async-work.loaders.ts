import DataLoader from 'dataloader';
import { defineLoader } from '../db/request-loaders';
import { AsyncWorkAttempt } from './async-work-attempt.entity';

/** The attempts of each unit of work listed, oldest first: one query for every unit of the request. */
export const workAttempts = defineLoader(
  (em) =>
    new DataLoader<string, AsyncWorkAttempt[]>(async (workIds) => {
      const attempts = await em.find(AsyncWorkAttempt, { work: { $in: [...workIds] } }, { orderBy: { number: 'asc' } });
      const byWork = new Map<string, AsyncWorkAttempt[]>();
      for (const attempt of attempts) {
        const list = byWork.get(attempt.work.id);
        if (list) list.push(attempt);
        else byWork.set(attempt.work.id, [attempt]);
      }
      return workIds.map((id) => byWork.get(id) ?? []);
    }),
);
