import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { ErrorCode, RestErrorShape } from '../errors/domain-error';
import type { RestNaming } from './names';

/**
 * Where a GraphQL variable's value is read from in the HTTP request, under its documented REST name. An enum read
 * from text is written as the enum's value (`app`), as REST records write it (src/rest/record.ts).
 */
export type ValueSource =
  | {
      from: 'path' | 'query' | 'header' | 'body';
      name: string;
      description?: string;
      required?: boolean;
    }
  /**
   * An input object assembled from several body fields: GraphQL input field -> REST body field. Objects nested in
   * them are read under their REST names (src/rest/names.ts: snake_case unless `naming` says otherwise).
   */
  | { from: 'bodyFields'; fields: Record<string, string>; naming?: RestNaming };

export const path = (name: string, description?: string): ValueSource => ({ from: 'path', name, description, required: true });
export const query = (name: string, description?: string): ValueSource => ({ from: 'query', name, description });
export const header = (name: string, description?: string): ValueSource => ({ from: 'header', name, description });
export const body = (name: string, description?: string): ValueSource => ({ from: 'body', name, description });
export const bodyFields = (fields: Record<string, string>, naming?: RestNaming): ValueSource => ({ from: 'bodyFields', fields, naming });
/** The account_id query parameter of the account-scoped routes, described once. */
export const accountIdQuery = query('account_id', 'required with an organization token; ignored with an account token');

/**
 * One documented REST path, as data: the GraphQL operation it runs, how each variable is read, the success
 * status, and the presenter that turns the GraphQL result into the documented snake_case record.
 */
// A route table holds routes of every operation: `any` here is "some operation's types" (the variables appear in
// `derive`'s parameter, so no other default would accept them all). defineRoute checks each route against its own.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface RestRoute<TData = any, TVariables extends Record<string, unknown> = any> {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Fastify path syntax: `/post/:id`. */
  path: string;
  summary: string;
  tag: string;
  /**
   * The operation's name in /openapi.json (what generated clients call it), unique in the table. Default: the GraphQL
   * operation's name without `Rest`, in lowerCamelCase (`RestCreatePost` -> `createPost`).
   */
  operationId?: string;
  /** Documented for OpenAPI and enforced by the operation: organization-token-only routes answer 403 otherwise. */
  organizationTokenOnly?: boolean;
  operation: TypedDocumentNode<TData, TVariables>;
  variables: { [K in keyof TVariables]?: ValueSource };
  /** Variables computed from the ones read, e.g. which branch of an operation to run. */
  derive?: (read: Partial<TVariables>) => Partial<TVariables>;
  successStatus: number;
  /** Where the documented payload is in the operation's data, and how it is written; the adapter wraps it as {success: true, payload}. */
  payload: RestRecord;
  /** Errors of this route beyond the ones every route may answer (src/rest/openapi.ts), for OpenAPI. */
  errors?: readonly ErrorCode[];
  /**
   * Where the document writes every error of a status of this route in another shape than the catalogue's (e.g. each
   * 400 as `{success: false, msg}`): by status, so that whatever refuses the request (the variable reader, the
   * operation, Fastify's body parsing) answers in it.
   */
  errorShapes?: Partial<Record<number, RestErrorShape>>;
  /**
   * Required fields missing from the request answer MISSING_FIELDS naming them all (the document's citations
   * shape), instead of a 400 naming the first.
   */
  missingFieldsError?: boolean;
  /**
   * `payload` (default): `{success: true, payload: <record>}`. `spread`: the record's own members beside `success`
   * (`{success: true, data: [...], found, page, per_page}`). `{bare}`: the record's members and these constant ones,
   * without `success` (the account-connection flows' `{url, external_api: true}`).
   */
  envelope?: 'payload' | 'spread' | { bare: Record<string, string | number | boolean> };
}

/**
 * How a route's payload is read from its operation's data and written in the document's names and units; the
 * presenter and the OpenAPI schema both follow from it and the schema's types (src/rest/record.ts).
 */
export interface RestRecord extends RestNaming {
  /** Response keys from the root, e.g. `createPost.post`; with several, the first present (an `@include` branch). */
  at: string | readonly string[];
  /** How the document writes `DateTime` fields. */
  times: 'epochMs' | 'iso';
  /**
   * By GraphQL type, where a payload holds records the document writes in different units (an event's record: a
   * beta brand's times are ISO strings, a post's milliseconds).
   */
  timesOf?: Readonly<Record<string, 'epochMs' | 'iso'>>;
  /** `Type.field`s that are absent from the record when unset, rather than null. */
  absentWhenNull?: readonly string[];
  /**
   * Verbatim `Type.field`s whose parts the document lists key by key (a scan's `client`): their unset fields are
   * written as null, where a verbatim provider body (`Post.params`) leaves them out.
   */
  writesNulls?: readonly string[];
  /** The document answers an empty list with this error. */
  emptyList?: { code: ErrorCode; message: string };
  /**
   * A query parameter naming which fields the items of a list keep (`include_fields=name,city`): comma-separated
   * REST names of the items' fields, checked against them (an unknown name is a 400); `always` are kept anyway.
   */
  fieldSelection?: { parameter: string; list: string; always: readonly string[]; description?: string };
  /**
   * What writes the success body: a serializer compiled from its schema (default), or JSON.stringify where that was
   * measured faster (src/rest/record.ts successSerializerSchema).
   */
  writer?: 'compiled' | 'JSON.stringify';
}

/** Keeps a route's type parameters tied to its operation while the table holds routes of many operations. */
export function defineRoute<TData, TVariables extends Record<string, unknown>>(
  route: RestRoute<TData, TVariables>,
): RestRoute<TData, TVariables> {
  return route;
}
