import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Where a server under measurement exports its traces (OTEL_EXPORTER_OTLP_ENDPOINT): an OTLP/HTTP endpoint that
 * reads each export and answers 200 with an empty result, as a collector does, and counts what it received. It keeps
 * nothing: the bench measures what exporting costs the server, not what a collector does with it.
 */
export interface OtlpSink {
  /** The base URL to give as OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds /v1/traces). */
  url: string;
  received(): { exports: number; bytes: number };
  close(): Promise<void>;
}

export function startOtlpSink(): Promise<OtlpSink> {
  let exports = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      exports += 1;
      // An empty ExportTraceServiceResponse in either encoding the exporter may use.
      const json = (req.headers['content-type'] ?? '').includes('json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : undefined);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        received: () => ({ exports, bytes }),
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
