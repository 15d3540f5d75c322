import { Arg, Args, ArgsType, Ctx, Field, FieldResolver, ID, Mutation, ObjectType, Query, Resolver, Root, Subscription } from 'type-graphql';
import { requirePrincipal } from '../access/guards';
import type { TopicPayloads } from '../events/topics';
import { withLimitHeaders, type Context } from '../graphql/context';
import { defineNode } from '../graphql/node';
import { PageType, type Page } from '../graphql/page';
import { ConnectionType, sliceRequestOf, toConnection, withConnectionArgs, type Connection } from '../graphql/relay-connection';
import { recordChangeFilter } from '../graphql/record-change-filter';
import { LocationUpdateJob } from './location-update-job.entity';
import { LocationUpdateStatus } from './location.enums';
import { loadUpdateJobForEvent } from './location.events';
import { LocationRefArgs, LocationUpdateJobsArgs, UpdateLocationArgs } from './location.inputs';
import { getUpdateJob, listUpdateJobs, listUpdateJobSlice, updateLocation } from './location.service';

export const LocationUpdateJobPage = PageType(LocationUpdateJob, 'LocationUpdateJobPage', 'updates');

export const LocationUpdateJobConnection = ConnectionType(LocationUpdateJob, 'LocationUpdateJob');

/** The filters of the cursor list of updates (one update by its id is `locationUpdateJob`). */
@ArgsType()
class LocationUpdateJobConnectionFilters {
  @Field(() => ID, { nullable: true, description: 'Required with an organization token; ignored with an account token.' })
  accountId?: string | null;

  @Field(() => ID, { nullable: true })
  locationId?: string | null;

  @Field(() => LocationUpdateStatus, { nullable: true })
  status?: LocationUpdateStatus | null;
}

@ArgsType()
export class LocationUpdateJobsConnectionArgs extends withConnectionArgs(LocationUpdateJobConnectionFilters) {}

/** An update's key is its account and its id: what `locationUpdateJob(accountId:, id:)` takes. */
export const locationUpdateJobNode = defineNode({
  name: 'LocationUpdateJob',
  types: [LocationUpdateJob],
  key: ['accountId', 'id'],
  keyOf: (job: LocationUpdateJob) => ({ accountId: job.account.id, id: job.id }),
  read: (ctx, key) => getUpdateJob(ctx, key),
});

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

  @Query(() => LocationUpdateJobPage, {
    description: 'Updates of the account’s locations, newest first (the GET /location/updates list).',
    deprecationReason: 'Use locationUpdateJobsPage (the same page), or locationUpdateJobsConnection.',
  })
  locationUpdateJobs(@Args() args: LocationUpdateJobsArgs, @Ctx() ctx: Context): Promise<Page<'updates', LocationUpdateJob>> {
    return listUpdateJobs(ctx, args);
  }

  @Query(() => LocationUpdateJobPage, { description: 'Updates of the account’s locations by page number, newest first (the GET /location/updates list).' })
  locationUpdateJobsPage(@Args() args: LocationUpdateJobsArgs, @Ctx() ctx: Context): Promise<Page<'updates', LocationUpdateJob>> {
    return listUpdateJobs(ctx, args);
  }

  @Query(() => LocationUpdateJobConnection, { description: 'Updates of the account’s locations, newest first.' })
  async locationUpdateJobsConnection(@Args() args: LocationUpdateJobsConnectionArgs, @Ctx() ctx: Context): Promise<Connection<LocationUpdateJob>> {
    return toConnection(await listUpdateJobSlice(ctx, args, sliceRequestOf(args)), args.after);
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
