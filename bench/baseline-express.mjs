// Baseline: a bare Express 5 app with one route, answering GET /v1/pricing with the very bytes
// and headers the app served (200), or its 304 headers when If-None-Match equals the ETag.
// usage: node bench/baseline-express.mjs <port> <response.json> <body file>
// bench/pricing-path-cost.mjs imports expressBaseline to run the same app in process.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const requireFromHere = createRequire(import.meta.url);

/** The Express app of the baseline: `x-powered-by` and Express's own ETags off. */
export function expressBaseline({ etag, headers200, headers304 }, body) {
  const express = requireFromHere('express');
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.get('/v1/pricing', (req, res) => {
    if (req.headers['if-none-match'] === etag) res.writeHead(304, headers304).end();
    else res.writeHead(200, headers200).end(body);
  });
  return app;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [port, responseFile, bodyFile] = process.argv.slice(2);
  const app = expressBaseline(JSON.parse(readFileSync(responseFile, 'utf8')), readFileSync(bodyFile));
  const server = app.listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
