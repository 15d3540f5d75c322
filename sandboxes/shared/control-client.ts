import type { ScriptedFailure } from './scripted-failures';

/** One call to a sandbox's controls: its JSON answer, or an Error naming the call and the refusal. */
export type ControlCall = (method: string, path: string, body?: unknown) => Promise<unknown>;

/** `baseUrl` is where the sandbox plugin is mounted; `name` starts the errors' messages (`alpha sandbox`). */
export function createControlCall(baseUrl: string, name: string): ControlCall {
  const root = `${baseUrl.replace(/\/+$/, '')}/_control`;
  return async (method, path, body) => {
    const response = await fetch(`${root}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${name} ${method} /_control${path}: HTTP ${response.status} ${text}`);
    return JSON.parse(text) as unknown;
  };
}

/**
 * The controls every sandbox has (see registerCommonControls); `Config` and `State` are the sandbox's own. The answers
 * come from our own simulator, whose types these are: no further check.
 */
export function commonControls<Config, State>(call: ControlCall) {
  return {
    async reset(): Promise<void> {
      await call('POST', '/reset');
    },
    async configure(patch: Partial<Config>): Promise<Config> {
      return (await call('PUT', '/config', patch)) as Config;
    },
    async fail(failure: Omit<ScriptedFailure, 'when'> & { when?: ScriptedFailure['when'] }): Promise<void> {
      await call('POST', '/fail', failure);
    },
    async state(): Promise<State> {
      return (await call('GET', '/state')) as State;
    },
  };
}
