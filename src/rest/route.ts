import type { TypedDocumentNode } from '@graphql-typed-document-node/core';

/** Where a GraphQL variable's value is read from in the HTTP request, under its documented REST name. */
export type ValueSource =
  | {
      from: 'path' | 'query' | 'header' | 'body';
      name: string;
      description?: string;
      required?: boolean;
      /** Maps the documented REST value to the GraphQL one (e.g. `app` -> the enum name `APP`). */
      toGraphQL?: (value: string) => string;
      /** The documented values, where they differ from the GraphQL enum's names (for messages and OpenAPI). */
      restValues?: readonly string[];
    }
  /** An input object assembled from several body fields: GraphQL input field -> REST body field. */
  | { from: 'bodyFields'; fields: Record<string, string> };

export const path = (name: string, description?: string): ValueSource => ({ from: 'path', name, description, required: true });
export const query = (
  name: string,
  description?: string,
  values?: { restValues: readonly string[]; toGraphQL: (value: string) => string },
): ValueSource => ({ from: 'query', name, description, ...values });
export const header = (name: string, description?: string): ValueSource => ({ from: 'header', name, description });
export const body = (name: string, description?: string): ValueSource => ({ from: 'body', name, description });
export const bodyFields = (fields: Record<string, string>): ValueSource => ({ from: 'bodyFields', fields });

/**
 * One documented REST path, as data: the GraphQL operation it runs, how each variable is read, the success
 * status, and the presenter that turns the GraphQL result into the documented snake_case record.
 */
export interface RestRoute<TData = any, TVariables extends Record<string, unknown> = any> {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Fastify path syntax: `/post/:id`. */
  path: string;
  summary: string;
  tag: string;
  /** Documented for OpenAPI and enforced by the operation: organization-token-only routes answer 403 otherwise. */
  organizationTokenOnly?: boolean;
  operation: TypedDocumentNode<TData, TVariables>;
  variables: { [K in keyof TVariables]?: ValueSource };
  /** Variables computed from the ones read, e.g. which branch of an operation to run. */
  derive?: (read: Partial<TVariables>) => Partial<TVariables>;
  successStatus: number;
  /** The documented payload, from the operation's data; the adapter wraps it as {success: true, payload}. */
  present: (data: TData) => unknown;
  /** Documented shape of the payload for OpenAPI (a JSON Schema). */
  payloadSchema: Record<string, unknown>;
}

/** Keeps a route's type parameters tied to its operation while the table holds routes of many operations. */
export function defineRoute<TData, TVariables extends Record<string, unknown>>(
  route: RestRoute<TData, TVariables>,
): RestRoute<TData, TVariables> {
  return route;
}
