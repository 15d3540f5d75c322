import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';

/**
 * One subscriber that speaks the graphql-ws protocol (graphql-transport-ws) by hand, to see the service's frames
 * as they are on the wire: bench/fanout sizes the plain baseline's frames after them. Its subscription id is a
 * UUID, as graphql-ws clients generate by default, so the frames have the length the other subscribers get.
 */
export class FrameProbe {
  /** Raw text of every `next` frame received. */
  readonly frames: string[] = [];
  private constructor(private readonly socket: WebSocket) {}

  static async open(options: { wsUrl: string; token: string; query: string; timeoutMs?: number }): Promise<FrameProbe> {
    const socket = new WebSocket(options.wsUrl, 'graphql-transport-ws');
    const probe = new FrameProbe(socket);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => fail(new Error('the frame probe was not acknowledged in time')), options.timeoutMs ?? 30_000);
      function fail(error: Error) {
        clearTimeout(timer);
        socket.terminate();
        reject(error);
      }
      socket.once('error', fail);
      socket.once('close', (code, reason) => fail(new Error(`the frame probe's socket closed: ${code} ${String(reason)}`)));
      socket.once('open', () => {
        socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${options.token}` } }));
      });
      socket.on('message', (data) => {
        // binaryType is the default, 'nodebuffer': a frame arrives as one Buffer.
        const text = (data as Buffer).toString();
        const message = JSON.parse(text) as { type?: string };
        if (message.type === 'connection_ack') {
          clearTimeout(timer);
          socket.removeAllListeners('close');
          socket.removeAllListeners('error');
          socket.on('error', () => undefined);
          socket.send(JSON.stringify({ id: randomUUID(), type: 'subscribe', payload: { query: options.query } }));
          resolve();
        } else if (message.type === 'next') probe.frames.push(text);
        else if (message.type === 'ping') socket.send(JSON.stringify({ type: 'pong' }));
      });
    });
    return probe;
  }

  close(): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.close(1000);
    else this.socket.terminate();
    setTimeout(() => this.socket.terminate(), 5_000).unref();
  }
}
