import type { ApolloServerPlugin } from '@apollo/server';
import { getOperationAST } from 'graphql';
import { errorCodeLabel, type Metrics } from '../observability/metrics';

/** Counts the GraphQL operations Apollo runs over HTTP (REST's and graphql-ws's are counted where they run). */
export function graphqlMetricsPlugin(metrics: Metrics): ApolloServerPlugin {
  return {
    async requestDidStart() {
      const started = performance.now();
      return {
        async willSendResponse({ operation, operationName, document, request, errors, response }) {
          // Not an operation: a request refused before parsing (no query) counts as HTTP only.
          if (!operation && !errors?.length) return;
          // A document refused by validation has no resolved operation yet: its name is read from the document.
          const definition = operation ?? (document ? getOperationAST(document, request.operationName) : null);
          const name = operationName ?? definition?.name?.value;
          const first = errors?.[0] ?? (response.body.kind === 'single' ? response.body.singleResult.errors?.[0] : undefined);
          metrics.countOperation({ name, type: definition?.operation ?? 'unknown', transport: 'http', errorCode: errorCodeLabel(first), started });
        },
      };
    },
  };
}
