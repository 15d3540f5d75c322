/**
 * The plain baseline of bench/fanout and bench/locations, run as its own process (`node --expose-gc
 * dist-dev/bench/support/broadcast-server.js`, forked with an IPC channel by bench/support/broadcast.ts): a bare `ws`
 * WebSocketServer on 127.0.0.1 that, on command, broadcasts frames on a fixed schedule. Each frame is serialized once
 * and the same bytes are sent to every open socket, as a plain broadcast does; its stamps are set just before the
 * send loop starts.
 */
import { performance } from 'node:perf_hooks';
import { WebSocket, WebSocketServer } from 'ws';

/**
 * Where a frame's event is and what of it the baseline rewrites: the member of `payload.data` holding the event,
 * the members stamped with the send time (ISO 8601), and the path of a text member that carries `<prefix>#<tick>`
 * (the run's tag, by which clients attribute frames) and the padding up to the service's frame size. The event's
 * `id` and `version` are rewritten too (unique per tick and frame).
 */
export interface FrameLayout {
  field: string;
  stamps: string[];
  tag: string[];
}

/** `postUpdated { id state version updateTime params { summary } }`: the tag is the summary. */
export const POST_FRAME_LAYOUT: FrameLayout = { field: 'postUpdated', stamps: ['updateTime'], tag: ['params', 'summary'] };

export interface BroadcastRunCommand {
  type: 'run';
  /** Events to mimic: each is `framesPerTick` frames, the k-th `gapMs * k` after the tick. */
  ticks: number;
  rate: number;
  framesPerTick: number;
  gapMs: number;
  /** A real graphql-ws `next` frame of the service, parsed: its shape is reused, its fields restamped. */
  template: NextFrame;
  layout: FrameLayout;
  /** Each frame is padded (in its tag) to at least this many bytes: the size of the service's frames. */
  frameBytes: number;
  /** Tag prefix of this run: the clients attribute frames by it. */
  prefix: string;
}

export interface NextFrame {
  id: string;
  type: 'next';
  payload: { data: Record<string, Record<string, unknown>> };
}

export type BroadcastCommand = BroadcastRunCommand | { type: 'memory' } | { type: 'stop' };

export type BroadcastReply =
  | { type: 'listening'; port: number }
  | { type: 'memory'; usage: NodeJS.MemoryUsage; clients: number }
  | { type: 'done'; frames: number; sockets: number; frameBytes: number; sendLoopMs: number[] }
  | { type: 'error'; message: string };

function send(reply: BroadcastReply): void {
  process.send?.(reply);
}

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: 1024 * 1024 });
wss.on('listening', () => {
  const address = wss.address();
  send({ type: 'listening', port: typeof address === 'object' && address ? address.port : 0 });
});
wss.on('connection', (socket) => socket.on('error', () => undefined));

function uuidOf(tick: number, frame: number): string {
  // 36 characters, like the UUIDs of the real frames; unique per (run, tick, frame) is enough.
  const hex = (tick * 16 + frame).toString(16).padStart(12, '0');
  return `00000000-0000-4000-8000-${hex}`;
}

/** Sets the member at `path` (creating the objects on the way, copied so the template is not changed). */
function setAt(target: Record<string, unknown>, path: string[], value: unknown): void {
  let object = target;
  for (const key of path.slice(0, -1)) {
    const next = object[key];
    object = object[key] = next && typeof next === 'object' ? { ...(next as Record<string, unknown>) } : {};
  }
  object[path[path.length - 1]!] = value;
}

function frameText(command: BroadcastRunCommand, tick: number, frame: number): string {
  const { layout } = command;
  const event: Record<string, unknown> = { ...command.template.payload.data[layout.field], id: uuidOf(tick, frame), version: frame + 1 };
  const now = new Date().toISOString();
  for (const stamp of layout.stamps) event[stamp] = now;
  const tag = `${command.prefix}#${tick}`;
  setAt(event, layout.tag, tag);
  const build = () => JSON.stringify({ id: command.template.id, type: 'next', payload: { data: { [layout.field]: event } } });
  let text = build();
  const missing = command.frameBytes - Buffer.byteLength(text);
  if (missing > 0) {
    setAt(event, layout.tag, `${tag} ${'.'.repeat(missing - 1)}`);
    text = build();
  }
  return text;
}

async function run(command: BroadcastRunCommand): Promise<void> {
  const start = performance.now();
  const sendLoopMs: number[] = [];
  let frames = 0;
  let bytes = 0;
  for (let tick = 0; tick < command.ticks; tick++) {
    for (let frame = 0; frame < command.framesPerTick; frame++) {
      const due = start + (tick * 1000) / command.rate + frame * command.gapMs;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const began = performance.now();
      const data = Buffer.from(frameText(command, tick, frame));
      for (const client of wss.clients) if (client.readyState === WebSocket.OPEN) client.send(data, { binary: false });
      sendLoopMs.push(performance.now() - began);
      frames += 1;
      bytes = data.length;
    }
  }
  send({ type: 'done', frames, sockets: wss.clients.size, frameBytes: bytes, sendLoopMs });
}

process.on('message', (command: BroadcastCommand) => {
  if (command.type === 'run') {
    run(command).catch((error: unknown) => send({ type: 'error', message: String(error) }));
  } else if (command.type === 'memory') {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    gc?.();
    send({ type: 'memory', usage: process.memoryUsage(), clients: wss.clients.size });
  } else if (command.type === 'stop') {
    for (const client of wss.clients) client.terminate();
    wss.close(() => process.exit(0));
  }
});
// The parent went away (killed, or Ctrl-C): nothing left to serve.
process.on('disconnect', () => process.exit(0));
