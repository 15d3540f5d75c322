import 'reflect-metadata';
import { runService } from '../src/main';

/**
 * `npm start`: the service as a developer runs it, with the provider simulators mounted on its own port (see
 * sandboxesWanted). The production start is `node dist/src/main.js`, which has no simulator in its build. The
 * simulators are loaded once tracing has started (src/main.ts): they load Fastify, which it instruments.
 */
runService(async (config) => {
  const { providerSandboxes, sandboxesWanted, sandboxQuotasFromEnv } = await import('./provider-sandboxes.js');
  return sandboxesWanted(process.env) ? providerSandboxes({ demoData: config.isDevelopment, quota: sandboxQuotasFromEnv(process.env) }) : undefined;
});
