import { createServer, connect, type Server, type Socket } from 'node:net';

/** Reads what passes through one connection; `fromServer` answering false drops the connection instead. */
export interface ConnectionInspector {
  fromClient(chunk: Buffer): void;
  fromServer(chunk: Buffer): boolean;
}

/**
 * A TCP proxy of the tests' and benches' own between the service and a server it depends on (Redis, PostgreSQL): the test cuts
 * it to make that server unreachable for the service alone, without touching the server itself. Cut, it drops
 * every open connection and every new one at once, as a stopped server's host does; stalled, it forwards nothing
 * and answers nothing, as a network dropping packets does; restored, it forwards again. With `inspect`, each
 * connection's traffic is read on its way, and may be dropped at a chosen message.
 */
export class TcpProxy {
  private readonly server: Server;
  private readonly pairs = new Set<{ client: Socket; upstream: Socket }>();
  private readonly waiters = new Set<() => void>();
  private refusing = false;
  private stalling = false;
  private readonly held = new Set<Socket>();
  /** Connections dropped by a cut, and connections refused while cut. */
  dropped = 0;
  refused = 0;

  constructor(
    private readonly target: { host: string; port: number },
    private readonly options: { inspect?: () => ConnectionInspector } = {},
  ) {
    this.server = createServer((client) => this.accept(client));
  }

  /** Listens on a free loopback port; returns it. */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        const address = this.server.address();
        resolve(typeof address === 'object' && address ? address.port : 0);
      });
    });
  }

  private notify(): void {
    this.waiters.forEach((wake) => wake());
  }

  private accept(client: Socket): void {
    if (this.stalling) {
      // Accepted, never answered: a host that drops packets.
      client.pause();
      client.on('error', () => client.destroy());
      client.on('close', () => this.held.delete(client));
      this.held.add(client);
      this.notify();
      return;
    }
    if (this.refusing) {
      this.refused += 1;
      client.destroy();
      this.notify();
      return;
    }
    const upstream = connect(this.target.port, this.target.host);
    const pair = { client, upstream };
    this.pairs.add(pair);
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.pairs.delete(pair);
    };
    for (const socket of [client, upstream]) {
      socket.on('error', end);
      socket.on('close', end);
    }
    const inspector = this.options.inspect?.();
    if (inspector) {
      client.on('data', (chunk: Buffer) => {
        inspector.fromClient(chunk);
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (inspector.fromServer(chunk)) client.write(chunk);
        else end();
      });
    } else {
      client.pipe(upstream);
      upstream.pipe(client);
    }
    this.notify();
  }

  /** Drops every connection, and refuses new ones until `restore`. */
  cut(): void {
    this.refusing = true;
    for (const { client, upstream } of [...this.pairs]) {
      this.dropped += 1;
      client.destroy();
      upstream.destroy();
    }
  }

  /** Forwards nothing more, either way, and answers no new connection, until `restore`: every packet dropped. */
  stall(): void {
    this.stalling = true;
    for (const { client, upstream } of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  /** Forwards again. Connections stalled meanwhile are dropped (their peers gave up on them, or will). */
  restore(): void {
    if (this.stalling) {
      this.stalling = false;
      this.cut();
      for (const socket of this.held) socket.destroy();
      this.held.clear();
    }
    this.refusing = false;
  }

  /** The local ports of the proxy's connections to the server: how the server names the service's connections. */
  upstreamPorts(): number[] {
    return [...this.pairs].map(({ upstream }) => upstream.localPort).filter((port): port is number => port !== undefined);
  }

  /** Resolves when `done` holds, checked on every connection accepted or refused (rejects after `timeoutMs`). */
  until(done: () => boolean, what: string, timeoutMs = 30000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  async close(): Promise<void> {
    this.cut();
    for (const socket of this.held) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
