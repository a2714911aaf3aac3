import http from 'node:http';

/**
 * An OTLP/HTTP receiver that takes and drops what it is sent, as a collector would: benches point
 * their edges' telemetry at it so exporting costs what it would in production, minus the network.
 */
export async function startOtlpSink(): Promise<{ url: string; requests: () => number; close(): void }> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as import('node:net').AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests: () => requests, close: () => server.close() };
}

/** The environment that turns an edge's traces and metrics on, exporting to `sinkUrl`. */
export function otlpEnv(sinkUrl: string): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl,
    OTEL_SERVICE_NAME: 'tollgate-edge-bench',
    OTEL_METRIC_EXPORT_INTERVAL: '10000',
  };
}
