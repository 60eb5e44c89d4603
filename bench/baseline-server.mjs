// Path (b) of `npm run bench -- gateway`: the floor for the gateway. A bare node:http server
// that reads the request body and answers a constant response: the gateway's own body and
// headers, captured by the bench from one real answer (BENCH_BODY, BENCH_HEADERS as JSON).
//   PORT=8545 node bench/baseline-server.mjs
import { createServer } from "node:http";

const body = Buffer.from(process.env.BENCH_BODY ?? '{"jsonrpc":"2.0","id":1,"result":"0x1"}');
// The bench passes the gateway's own response headers (minus those node:http adds itself).
const defaultHeaders = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": "X-Request-Id, Retry-After",
  "x-request-id": `req_${"1".repeat(22)}`,
  "content-type": "application/json; charset=utf-8",
};
const headers = {
  ...(process.env.BENCH_HEADERS ? JSON.parse(process.env.BENCH_HEADERS) : defaultHeaders),
  "content-length": body.length,
};

const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 60_000 }, (req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => res.writeHead(200, headers).end(body));
});
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1", () => console.log(`listening on ${server.address().port}`));
process.on("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeIdleConnections();
});
