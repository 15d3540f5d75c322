import fastifyCors from '@fastify/cors';
import fp from 'fastify-plugin';
import type { Config } from '../config';
import { REQUEST_ID_HEADER } from './request-id';

/** How long a browser may reuse a preflight's answer before asking again (seconds). */
export const CORS_PREFLIGHT_MAX_AGE_SECONDS = 600;

/** Response headers a browser app needs to read: the request id, the limits and the idempotent replay. */
export const CORS_EXPOSED_HEADERS = [REQUEST_ID_HEADER, 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'Idempotent-Replayed'];

/** Request headers a browser app may send: the token, JSON, an idempotency key, its own request id, Accept. */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Accept', 'Idempotency-Key', REQUEST_ID_HEADER];

/** This machine's own origins, any port: the default in development (a front-end's dev server on localhost:5173). */
const LOOPBACK_ORIGIN = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/;

/**
 * Cross-origin calls from browsers: docs/frontend.md, "Calling from a browser on another origin (CORS)". The hook
 * runs first, so errors and refusals carry Access-Control-Allow-Origin too; credentials stay off because the API
 * authenticates by bearer token, never cookies.
 */
export const corsPlugin = fp<{ cors: Config['cors'] }>(
  async (app, { cors }) => {
    if (cors.mode === 'off') return;
    const origin = cors.mode === 'any' ? '*' : cors.mode === 'list' ? cors.origins : LOOPBACK_ORIGIN;
    await app.register(fastifyCors, {
      origin,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      allowedHeaders: CORS_ALLOWED_HEADERS,
      exposedHeaders: CORS_EXPOSED_HEADERS,
      credentials: false,
      maxAge: CORS_PREFLIGHT_MAX_AGE_SECONDS,
      // An OPTIONS that is not a preflight (no Origin or no Access-Control-Request-Method) gets a plain 204 rather
      // than the plugin's undocumented 400 text.
      strictPreflight: false,
    });
  },
  { name: 'cors' },
);
