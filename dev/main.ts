import 'reflect-metadata';
import { runService } from '../src/main';
import { providerSandboxes, sandboxesWanted } from './provider-sandboxes';

/**
 * `npm start`: the service as a developer runs it, with the provider simulators mounted on its own port (see
 * sandboxesWanted). The production start is `node dist/src/main.js`, which has no simulator in its build.
 */
runService((config) => (sandboxesWanted(process.env) ? providerSandboxes({ demoData: config.isDevelopment }) : undefined));
