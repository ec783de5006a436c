// Baseline: a bare node:http server answering GET /v1/pricing with the very bytes and headers
// the app served (200), or its 304 headers when If-None-Match equals the ETag.
// usage: node bench/baseline-http.mjs <port> <response.json> <body file>
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [port, responseFile, bodyFile] = process.argv.slice(2);
const { etag, headers200, headers304 } = JSON.parse(readFileSync(responseFile, 'utf8'));
const body = readFileSync(bodyFile);

const server = createServer((req, res) => {
  if (req.url !== '/v1/pricing') {
    res.writeHead(404).end();
  } else if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, headers304).end();
  } else {
    res.writeHead(200, headers200).end(body);
  }
});
server.listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
