import { Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { ConnectionType, sliceRequestOf, toConnection, type Connection } from '../graphql/relay-connection';
import { withLimitHeaders, type Context } from '../graphql/context';
import { defineNode } from '../graphql/node';
import { CompetitorScan } from './competitor-scan.entity';
import { CompetitorScanArgs, CompetitorScansArgs, RunCompetitorScanArgs } from './competitor-scan.inputs';
import { getCompetitorScan, listCompetitorScans, runCompetitorScan } from './competitor-scan.service';
import { ScanTimestamp } from './competitor-scan.types';

export const CompetitorScanConnection = ConnectionType(CompetitorScan, 'CompetitorScan');

/** A scan's key is its account and its id: what `competitorScan(accountId:, scanId:)` takes. */
export const competitorScanNode = defineNode({
  name: 'CompetitorScan',
  types: [CompetitorScan],
  key: ['accountId', 'id'],
  keyOf: (scan: CompetitorScan) => ({ accountId: scan.account.id, id: scan.id }),
  read: (ctx, key) => getCompetitorScan(ctx, { accountId: key.accountId, scanId: key.id }),
});

@Resolver(() => CompetitorScan)
export class CompetitorScanResolver {
  @Query(() => CompetitorScan, { description: 'A scan by id, or the latest of the account (of a location, or a place id).' })
  competitorScan(@Args() args: CompetitorScanArgs, @Ctx() ctx: Context): Promise<CompetitorScan> {
    return getCompetitorScan(ctx, args);
  }

  @Query(() => CompetitorScanConnection, { description: 'Scans of the account, newest first.' })
  async competitorScans(@Args() args: CompetitorScansArgs, @Ctx() ctx: Context): Promise<Connection<CompetitorScan>> {
    return toConnection(await listCompetitorScans(ctx, args, sliceRequestOf(args)), args.after);
  }

  @Mutation(() => CompetitorScan, { description: 'Starts a scan of a location; it is queued, and a job runs it (watch `status`).' })
  async runCompetitorScan(@Args() args: RunCompetitorScanArgs, @Ctx() ctx: Context): Promise<CompetitorScan> {
    return withLimitHeaders(ctx, await runCompetitorScan(ctx, args));
  }

  @FieldResolver(() => ID)
  accountId(@Root() scan: CompetitorScan): string {
    return scan.account.id;
  }

  @FieldResolver(() => ID)
  locationId(@Root() scan: CompetitorScan): string {
    return scan.location.id;
  }

  @FieldResolver(() => ScanTimestamp, { nullable: true, description: 'When it ended, as seconds and nanoseconds.' })
  finishedAt(@Root() scan: CompetitorScan): ScanTimestamp | null {
    if (!scan.finishedAt) return null;
    const ms = scan.finishedAt.getTime();
    return { _seconds: Math.floor(ms / 1000), _nanoseconds: (ms % 1000) * 1_000_000 };
  }
}
