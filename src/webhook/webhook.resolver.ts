import { Arg, Args, Ctx, Field, FieldResolver, ID, Int, Mutation, ObjectType, Query, Resolver, Root } from 'type-graphql';
import type { Context } from '../graphql/context';
import { defineNode } from '../graphql/node';
import { PageType, type Page } from '../graphql/page';
import { ConnectionArgs, ConnectionType, sliceRequestOf, toConnection, type Connection } from '../graphql/relay-connection';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { CreateWebhookEndpointInput, UpdateWebhookEndpointInput, WebhookDeliveriesArgs, WebhookDeliveriesPageArgs, WebhookEndpointsPageArgs } from './webhook.inputs';
import {
  createEndpoint, deleteEndpoint, getEndpoint, listDeliveries, listDeliveriesPage, listEndpoints, listEndpointsPage, pingEndpoint, redeliverEvent, rotateSecret, updateEndpoint,
} from './webhook.service';
import { lastWebhookDelivery, webhookBacklog, webhookDeliveryAttempts, webhookDeliveryBodies } from './webhook.loaders';
import { WebhookDeliveryAttempt, WebhookRequestHeader } from './webhook-delivery-attempt.entity';

@ObjectType({ description: 'An endpoint with its signing secret, shown this once.' })
export class WebhookEndpointWithSecret {
  @Field({ description: 'Verify each request’s `Listings-Signature` with it (docs/webhooks.md). It is never shown again.' })
  secret!: string;

  @Field(() => WebhookEndpoint)
  endpoint!: WebhookEndpoint;
}

@ObjectType()
export class DeletedWebhookEndpoint {
  @Field(() => ID)
  id!: string;

  @Field()
  deleted!: boolean;
}

export const WebhookEndpointConnection = ConnectionType(WebhookEndpoint, 'WebhookEndpoint');
export const WebhookDeliveryConnection = ConnectionType(WebhookDelivery, 'WebhookDelivery');
export const WebhookEndpointPage = PageType(WebhookEndpoint, 'WebhookEndpointPage', 'endpoints');
export const WebhookDeliveryPage = PageType(WebhookDelivery, 'WebhookDeliveryPage', 'deliveries');

/** Webhooks (docs/webhooks.md): organization tokens only. */
export const webhookEndpointNode = defineNode({
  name: 'WebhookEndpoint',
  types: [WebhookEndpoint],
  key: ['id'],
  keyOf: (endpoint: WebhookEndpoint) => ({ id: endpoint.id }),
  read: (ctx, key) => getEndpoint(ctx, key.id),
});

@Resolver(() => WebhookEndpoint)
export class WebhookEndpointResolver {
  @Query(() => WebhookEndpointConnection, { description: 'The organization’s webhook endpoints, oldest first. Organization token only.' })
  async webhookEndpoints(@Args() args: ConnectionArgs, @Ctx() ctx: Context): Promise<Connection<WebhookEndpoint>> {
    return toConnection(await listEndpoints(ctx, sliceRequestOf(args)), args.after);
  }

  @Query(() => WebhookEndpointPage, { description: 'The organization’s webhook endpoints by page number, oldest first (GET /webhooks). Organization token only.' })
  webhookEndpointsPage(@Args() args: WebhookEndpointsPageArgs, @Ctx() ctx: Context): Promise<Page<'endpoints', WebhookEndpoint>> {
    return listEndpointsPage(ctx, args);
  }

  @Query(() => WebhookEndpoint, { description: 'One webhook endpoint. Organization token only.' })
  webhookEndpoint(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<WebhookEndpoint> {
    return getEndpoint(ctx, id);
  }

  @Query(() => WebhookDeliveryConnection, { description: 'The delivery log of an endpoint, newest first. Organization token only.' })
  async webhookDeliveries(@Args() args: WebhookDeliveriesArgs, @Ctx() ctx: Context): Promise<Connection<WebhookDelivery>> {
    return toConnection(await listDeliveries(ctx, args, sliceRequestOf(args)), args.after);
  }

  @Query(() => WebhookDeliveryPage, { description: 'The delivery log of an endpoint by page number, newest first (GET /webhooks/:id/deliveries).' })
  webhookDeliveriesPage(@Args() args: WebhookDeliveriesPageArgs, @Ctx() ctx: Context): Promise<Page<'deliveries', WebhookDelivery>> {
    return listDeliveriesPage(ctx, args);
  }

  @FieldResolver(() => Int, { description: 'Its deliveries not ended yet (PENDING or SENDING): what it has still to receive.' })
  backlog(@Root() endpoint: WebhookEndpoint, @Ctx() ctx: Context): Promise<number> {
    return webhookBacklog(ctx).load(endpoint.id);
  }

  @FieldResolver(() => WebhookDelivery, { nullable: true, description: 'Its newest delivery (its status, latest attempt and error); null before the first.' })
  lastDelivery(@Root() endpoint: WebhookEndpoint, @Ctx() ctx: Context): Promise<WebhookDelivery | null> {
    return lastWebhookDelivery(ctx).load(endpoint.id);
  }

  @Mutation(() => WebhookEndpointWithSecret, { description: 'Adds an endpoint; its signing secret is in the answer, this once.' })
  createWebhookEndpoint(@Arg('input', () => CreateWebhookEndpointInput) input: CreateWebhookEndpointInput, @Ctx() ctx: Context): Promise<WebhookEndpointWithSecret> {
    return createEndpoint(ctx, input);
  }

  @Mutation(() => WebhookEndpoint, { description: 'Changes an endpoint (URL, event types, description, enabled).' })
  updateWebhookEndpoint(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateWebhookEndpointInput) input: UpdateWebhookEndpointInput,
    @Ctx() ctx: Context,
  ): Promise<WebhookEndpoint> {
    return updateEndpoint(ctx, id, input);
  }

  @Mutation(() => DeletedWebhookEndpoint, { description: 'Deletes an endpoint and its delivery log.' })
  deleteWebhookEndpoint(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<DeletedWebhookEndpoint> {
    return deleteEndpoint(ctx, id);
  }

  @Mutation(() => WebhookEndpointWithSecret, { description: 'A new signing secret, shown this once; the old one also signs for WEBHOOK_SECRET_GRACE_HOURS.' })
  rotateWebhookSecret(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<WebhookEndpointWithSecret> {
    return rotateSecret(ctx, id);
  }

  @Mutation(() => WebhookDelivery, { description: 'Sends a `ping` event to the endpoint, to test it.' })
  pingWebhookEndpoint(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<WebhookDelivery> {
    return pingEndpoint(ctx, id);
  }

  @Mutation(() => WebhookDelivery, { description: 'Sends an event of the organization to the endpoint again (same event id).' })
  redeliverWebhookEvent(@Arg('endpointId', () => ID) endpointId: string, @Arg('eventId', () => ID) eventId: string, @Ctx() ctx: Context): Promise<WebhookDelivery> {
    return redeliverEvent(ctx, endpointId, eventId);
  }
}

@Resolver(() => WebhookDelivery)
export class WebhookDeliveryResolver {
  @FieldResolver(() => ID)
  endpointId(@Root() delivery: WebhookDelivery): string {
    return delivery.endpoint.id;
  }

  @FieldResolver(() => String, { description: 'The request’s body: the exact bytes sent (and signed), the same at every attempt.' })
  async requestBody(@Root() delivery: WebhookDelivery, @Ctx() ctx: Context): Promise<string> {
    return (await webhookDeliveryBodies(ctx).load(delivery.id)) ?? '';
  }

  @FieldResolver(() => [WebhookDeliveryAttempt], { description: 'Every attempt, oldest first: the request’s headers and the answer’s status and excerpt.' })
  attemptHistory(@Root() delivery: WebhookDelivery, @Ctx() ctx: Context): Promise<WebhookDeliveryAttempt[]> {
    return webhookDeliveryAttempts(ctx).load(delivery.id);
  }
}

@Resolver(() => WebhookDeliveryAttempt)
export class WebhookDeliveryAttemptResolver {
  @FieldResolver(() => [WebhookRequestHeader], { description: 'The request’s headers as sent, in order (the signature included).' })
  requestHeaders(@Root() attempt: WebhookDeliveryAttempt): WebhookRequestHeader[] {
    return attempt.requestHeaders.map(([name, value]) => ({ name, value }));
  }
}
