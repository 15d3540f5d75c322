import { Arg, Args, Ctx, Field, FieldResolver, ID, Mutation, ObjectType, Query, Resolver, Root, Subscription } from 'type-graphql';
import { requirePrincipal } from '../access/guards';
import type { TopicPayloads } from '../events/topics';
import { withLimitHeaders, type Context } from '../graphql/context';
import { PageType, type Page } from '../graphql/page';
import { recordChangeFilter } from '../graphql/record-change-filter';
import { LocationUpdateJob } from './location-update-job.entity';
import { loadUpdateJobForEvent } from './location.events';
import { LocationRefArgs, LocationUpdateJobsArgs, UpdateLocationArgs } from './location.inputs';
import { getUpdateJob, listUpdateJobs, updateLocation } from './location.service';

export const LocationUpdateJobPage = PageType(LocationUpdateJob, 'LocationUpdateJobPage', 'updates');

@ObjectType()
export class UpdateLocationPayload {
  @Field(() => ID, { description: 'The update job: poll it with locationUpdateJob, or subscribe to locationUpdateJobUpdated.' })
  id!: string;

  @Field()
  message!: string;

  @Field(() => LocationUpdateJob)
  job!: LocationUpdateJob;
}

@Resolver(() => LocationUpdateJob)
export class LocationUpdateJobResolver {
  @Mutation(() => UpdateLocationPayload, {
    description: 'Updates a location with only the fields that change; a job sends it to the alpha provider (one at a time per location).',
  })
  async updateLocation(@Args() args: UpdateLocationArgs, @Ctx() ctx: Context): Promise<UpdateLocationPayload> {
    const { job, message } = withLimitHeaders(ctx, await updateLocation(ctx, args));
    return { id: job.id, message, job };
  }

  @Query(() => LocationUpdateJobPage, { description: 'Updates of the account’s locations, newest first (the GET /location/updates list).' })
  locationUpdateJobs(@Args() args: LocationUpdateJobsArgs, @Ctx() ctx: Context): Promise<Page<'updates', LocationUpdateJob>> {
    return listUpdateJobs(ctx, args);
  }

  @Query(() => LocationUpdateJob, { description: 'One update of the account’s locations.' })
  locationUpdateJob(@Args() args: LocationRefArgs, @Ctx() ctx: Context): Promise<LocationUpdateJob> {
    return getUpdateJob(ctx, args);
  }

  @Subscription(() => LocationUpdateJob, {
    topics: 'location-update-job.updated',
    description: "The whole update job after each change, for the subscriber's own organization (and account, for account tokens).",
    filter: recordChangeFilter('location-update-job.updated', { idArg: 'jobId' }),
  })
  locationUpdateJobUpdated(
    @Root() payload: TopicPayloads['location-update-job.updated'],
    @Arg('jobId', () => ID, { nullable: true }) _jobId: string | null,
    @Arg('locationId', () => ID, { nullable: true }) _locationId: string | null,
    @Ctx() ctx: Context,
  ): Promise<LocationUpdateJob> {
    requirePrincipal(ctx);
    return loadUpdateJobForEvent(ctx.runtime, payload);
  }

  @FieldResolver(() => ID)
  locationId(@Root() job: LocationUpdateJob): string {
    return job.location.id;
  }

  @FieldResolver(() => ID)
  accountId(@Root() job: LocationUpdateJob): string {
    return job.account.id;
  }
}
