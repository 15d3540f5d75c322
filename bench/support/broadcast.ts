import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import type { BroadcastCommand, BroadcastReply, BroadcastRunCommand } from './broadcast-server';
import { postEventHandler, type NextHandler, type PhaseRecorder } from './subscribers';

/**
 * The parent's side of the plain `ws` baseline: the broadcast server (bench/support/broadcast-server.ts) in its
 * own process, and `count` bare `ws` clients in the benchmark's process that hand each frame's data to the same
 * handler as the graphql-ws subscribers (bench/support/subscribers.ts), so both are timed alike (`Date.now()` on
 * arrival − the event's stamp).
 */
export interface BroadcastServer {
  port: number;
  pid: number | undefined;
  /** process.memoryUsage() of the server after two gc() calls (it runs with --expose-gc). */
  memory(): Promise<{ usage: NodeJS.MemoryUsage; clients: number }>;
  run(command: Omit<BroadcastRunCommand, 'type'>): Promise<Extract<BroadcastReply, { type: 'done' }>>;
  stop(): Promise<void>;
}

export async function startBroadcastServer(signal: AbortSignal): Promise<BroadcastServer> {
  const child: ChildProcess = fork(path.join(__dirname, 'broadcast-server.js'), [], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const replies: ((reply: BroadcastReply) => boolean)[] = [];
  let exited = false;
  child.on('message', (reply: BroadcastReply) => {
    const index = replies.findIndex((accept) => accept(reply));
    if (index >= 0) replies.splice(index, 1);
  });
  const gone = new Promise<never>((_, reject) => {
    child.once('exit', (code, sig) => {
      exited = true;
      reject(new Error(`the broadcast server exited (${code ?? sig})`));
    });
  });
  gone.catch(() => undefined);
  const expect = <T extends BroadcastReply['type']>(type: T, timeoutMs: number): Promise<Extract<BroadcastReply, { type: T }>> =>
    Promise.race([
      gone,
      new Promise<Extract<BroadcastReply, { type: T }>>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the broadcast server did not answer ${type} within ${timeoutMs / 1000} s`)), timeoutMs);
        const onAbort = () => {
          clearTimeout(timer);
          reject(new Error(`aborted while waiting for the broadcast server (${type})`));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        replies.push((reply) => {
          if (reply.type === 'error') {
            clearTimeout(timer);
            signal.removeEventListener('abort', onAbort);
            reject(new Error(`broadcast server: ${reply.message}`));
            return true;
          }
          if (reply.type !== type) return false;
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          resolve(reply as Extract<BroadcastReply, { type: T }>);
          return true;
        });
      }),
    ]);
  const command = (message: BroadcastCommand) => {
    if (!exited && child.connected) child.send(message);
  };
  const stop = async () => {
    if (exited) return;
    command({ type: 'stop' });
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await gone.catch(() => undefined);
    clearTimeout(timer);
  };
  try {
    const { port } = await expect('listening', 10_000);
    return {
      port,
      pid: child.pid,
      memory: async () => {
        const answer = expect('memory', 30_000);
        command({ type: 'memory' });
        const { usage, clients } = await answer;
        return { usage, clients };
      },
      run: async (options) => {
        const timeoutMs = 60_000 + ((options.ticks / options.rate) * 1000) * 2;
        const answer = expect('done', timeoutMs);
        command({ type: 'run', ...options });
        return answer;
      },
      stop,
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

interface NextMessage {
  type?: string;
  payload?: { data?: Record<string, unknown> };
}

/** `count` bare `ws` clients of the broadcast server, opened `batch` at a time. */
export class BroadcastClients {
  private readonly sockets: WebSocket[] = [];
  private handler: NextHandler | undefined;
  private open = 0;
  readonly errors: string[] = [];
  private closing = false;

  constructor(private readonly options: { url: string; count: number; signal: AbortSignal }) {}

  get size(): number {
    return this.options.count;
  }

  /** Frames of posts whose summary starts with the recorder's prefix go to it. */
  setRecorder(recorder: PhaseRecorder | undefined): void {
    this.handler = recorder && postEventHandler(recorder);
  }

  /** Every frame's data goes to `handler` (undefined: frames are dropped). */
  setHandler(handler: NextHandler | undefined): void {
    this.handler = handler;
  }

  async connect(batch = 50, timeoutMs = 120_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (let start = 0; start < this.options.count; start += batch) {
      const end = Math.min(this.options.count, start + batch);
      for (let index = start; index < end; index++) this.sockets.push(this.socket(index));
      while (this.open < end && this.errors.length === 0) {
        if (this.options.signal.aborted) throw new Error('aborted while connecting the baseline clients');
        if (performance.now() > deadline) throw new Error(`timed out connecting the baseline clients (${this.open}/${this.options.count})`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      if (this.errors.length > 0) throw new Error(`a baseline client failed: ${this.errors[0]}`);
    }
  }

  private socket(index: number): WebSocket {
    const socket = new WebSocket(this.options.url);
    socket.on('open', () => {
      this.open += 1;
    });
    socket.on('message', (data) => {
      // What the graphql-ws client does with a frame: parse it, then hand the result to the sink.
      const at = performance.now();
      const wallClock = Date.now();
      // binaryType is the default, 'nodebuffer': a frame arrives as one Buffer.
      const message = JSON.parse((data as Buffer).toString()) as NextMessage;
      const payload = message.type === 'next' ? message.payload?.data : undefined;
      if (payload) this.handler?.(index, payload, at, wallClock);
    });
    socket.on('error', (error) => {
      if (!this.closing && this.errors.length < 20) this.errors.push(`baseline client ${index}: ${error.message}`);
    });
    socket.on('close', () => {
      if (!this.closing && this.errors.length < 20) this.errors.push(`baseline client ${index}: closed unexpectedly`);
    });
    return socket;
  }

  async close(timeoutMs = 10_000): Promise<void> {
    this.closing = true;
    for (const socket of this.sockets) if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING) socket.close(1000);
    const deadline = performance.now() + timeoutMs;
    while (this.sockets.some((socket) => socket.readyState !== WebSocket.CLOSED) && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const socket of this.sockets) if (socket.readyState !== WebSocket.CLOSED) socket.terminate();
    this.sockets.length = 0;
  }
}
