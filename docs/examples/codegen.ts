// A front-end's codegen.ts for Listings Gateway (docs/frontend.md): typed documents from its own operations, the
// service's scalars mapped to what they carry on the wire, and the manifest for trusted documents.
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  // The service's schema: the committed schema.graphql, or the running server (introspection needs a token in production).
  schema: process.env.LISTINGS_SCHEMA ?? 'http://127.0.0.1:4000/graphql',
  documents: [process.env.LISTINGS_DOCUMENTS ?? 'src/**/*.graphql'],
  generates: {
    [process.env.LISTINGS_OUTPUT ?? 'src/gql/']: {
      preset: 'client',
      presetConfig: {
        // Writes persisted-documents.json: give it to the server as TRUSTED_DOCUMENTS, send operations by documentId.
        persistedDocuments: true,
        fragmentMasking: false,
      },
      config: {
        // DateTime: an ISO 8601 string at UTC (2026-11-26T10:15:30.000Z); parse it where you need a Date.
        // JSON: any JSON value (a location's service area, an account's parameters).
        scalars: {
          DateTime: { input: 'string', output: 'string' },
          JSON: { input: 'unknown', output: 'string | number | boolean | null | { [key: string]: unknown } | unknown[]' },
        },
        enumsAsTypes: true,
        useTypeImports: true,
      },
    },
  },
};

export default config;
