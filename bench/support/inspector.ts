import { readFileSync } from 'node:fs';
import WebSocket from 'ws';

/**
 * Memory of a Node process the benchmark started with `--inspect=127.0.0.1:<port>`, read through the V8
 * inspector: a full garbage collection first (HeapProfiler.collectGarbage, what DevTools' "collect garbage" button
 * does), then `process.memoryUsage()` evaluated inside it. Nothing else can force a GC in another process. A
 * session is opened for one reading and closed again, so the server runs without a debugger attached otherwise.
 */

export interface MemoryReading {
  /** process.memoryUsage() after the forced GC, bytes. */
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  rss: number;
}

/** VmRSS of a process from /proc (Linux), bytes; undefined when unknown. */
export function residentBytes(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Lines Node prints on stderr when a session attaches or detaches: not the server's warnings. */
export const INSPECTOR_NOISE = /Debugger (listening|attached|ending)|For help, see: https:\/\/nodejs\.org|Waiting for the debugger/;

export async function readMemoryAfterGc(inspectorPort: number, timeoutMs = 30_000): Promise<MemoryReading> {
  const list = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as { webSocketDebuggerUrl?: string }[];
  const url = list[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target on 127.0.0.1:${inspectorPort}`);
  const socket = new WebSocket(url, { perMessageDeflate: false });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  socket.on('message', (data) => {
    // binaryType is the default, 'nodebuffer': a message arrives as one Buffer.
    const message = JSON.parse((data as Buffer).toString()) as { id?: number; result?: unknown; error?: { message: string } };
    if (message.id === undefined) return;
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.error) waiter?.reject(new Error(message.error.message));
    else waiter?.resolve(message.result);
  });
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  const timer = setTimeout(() => socket.terminate(), timeoutMs);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
      socket.once('close', () => reject(new Error('inspector socket closed')));
    });
    socket.on('close', () => {
      for (const waiter of pending.values()) waiter.reject(new Error('inspector socket closed'));
      pending.clear();
    });
    // Twice: objects with finalizers (and weak references) are freed by the second collection.
    await call('HeapProfiler.collectGarbage');
    await call('HeapProfiler.collectGarbage');
    const evaluated = (await call('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    })) as { result?: { value?: unknown } };
    if (typeof evaluated.result?.value !== 'string') throw new Error('process.memoryUsage() could not be read through the inspector');
    return JSON.parse(evaluated.result.value) as MemoryReading;
  } finally {
    clearTimeout(timer);
    socket.close();
  }
}
