// The bare node:http servers `npm run bench -- gateway` compares the gateway with.
//
//   (b) BASELINE_MODE=constant (default): the floor for the gateway. Reads the request body and
//       answers a constant response: the gateway's own body and headers, captured by the bench
//       from one real answer (BENCH_BODY, BENCH_HEADERS as JSON), pre-serialised once.
//   (c) BASELINE_MODE=jsonrpc: what every JSON-RPC server has to do at least, without auth,
//       limits or metering. Collects the body, JSON.parses it and answers
//       JSON.stringify({ jsonrpc: "2.0", id: <the request's id>, result: BENCH_RESULT }) with
//       the same headers, a per-request X-Request-Id built from a counter, and the
//       Content-Length of each response.
//
//   BENCH_DELAY_MS=50 (constant mode): each answer waits that long, as a receiver doing real work
//   (npm run bench -- webhook-delivery, its fairness part).
//
//   PORT=8545 node bench/baseline-server.mjs
//   BASELINE_MODE=jsonrpc BENCH_RESULT=0x1 PORT=8545 node bench/baseline-server.mjs
import { createServer } from "node:http";

/** @typedef {(req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => void} Handler */

const mode = process.env.BASELINE_MODE ?? "constant";
if (mode !== "constant" && mode !== "jsonrpc") throw new Error(`BASELINE_MODE must be "constant" or "jsonrpc", got "${mode}"`);

// The bench passes the gateway's own response headers (minus those node:http adds itself).
const defaultHeaders = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": "X-Request-Id, Retry-After",
  "x-request-id": `req_${"1".repeat(22)}`,
  "content-type": "application/json; charset=utf-8",
};
const ownHeaders = process.env.BENCH_HEADERS ? JSON.parse(process.env.BENCH_HEADERS) : defaultHeaders;

/** @returns {Handler} */
function constantHandler() {
  const body = Buffer.from(process.env.BENCH_BODY ?? '{"jsonrpc":"2.0","id":1,"result":"0x1"}');
  const headers = { ...ownHeaders, "content-length": body.length };
  const delayMs = Number(process.env.BENCH_DELAY_MS ?? 0);
  return (req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on("data", (/** @type {Buffer} */ chunk) => chunks.push(chunk));
    req.on("end", () => {
      if (delayMs > 0) setTimeout(() => res.writeHead(200, headers).end(body), delayMs);
      else res.writeHead(200, headers).end(body);
    });
  };
}

/** @returns {Handler} */
function jsonRpcHandler() {
  const result = process.env.BENCH_RESULT ?? "0x1";
  // Written out like a hand-written server (and the gateway, lib/gateway/router.ts) would: an
  // object literal per response. (Spreading the captured headers into a new object per request
  // costs about 8 µs more, which is not what a JSON-RPC server has to pay.)
  const names = ["access-control-allow-origin", "access-control-expose-headers", "x-request-id", "content-type"];
  const got = Object.keys(ownHeaders);
  if (got.length !== names.length || !names.every((n) => got.includes(n))) {
    throw new Error(`(c) writes the headers ${names.join(", ")}; (a) sends ${got.join(", ")}: update bench/baseline-server.mjs`);
  }
  const allowOrigin = ownHeaders["access-control-allow-origin"];
  const exposeHeaders = ownHeaders["access-control-expose-headers"];
  const contentType = ownHeaders["content-type"];
  // Request ids like the gateway's: a fixed per-process prefix and a base-36 counter, as long
  // as the sample id the bench captured from (a), so the header bytes match.
  const sampleId = String(ownHeaders["x-request-id"]);
  const counterWidth = Math.min(6, Math.max(1, sampleId.length - 4));
  const idPrefix = sampleId.slice(0, sampleId.length - counterWidth);
  let counter = 0;
  const nextRequestId = () => `${idPrefix}${(++counter).toString(36).padStart(counterWidth, "0")}`;
  /** @type {(res: import("node:http").ServerResponse, status: number, payload: unknown) => void} */
  const reply = (res, status, payload) => {
    const body = JSON.stringify(payload);
    res.writeHead(status, {
      "Access-Control-Allow-Origin": allowOrigin,
      "Access-Control-Expose-Headers": exposeHeaders,
      "X-Request-Id": nextRequestId(),
      "Content-Type": contentType,
      "Content-Length": Buffer.byteLength(body),
    });
    res.end(body);
  };
  return (req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on("data", (/** @type {Buffer} */ chunk) => chunks.push(chunk));
    req.on("end", () => {
      let request;
      try {
        request = JSON.parse((chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks)).toString("utf8"));
      } catch {
        reply(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
        return;
      }
      reply(res, 200, { jsonrpc: "2.0", id: request?.id ?? null, result });
    });
  };
}

const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 60_000 }, mode === "jsonrpc" ? jsonRpcHandler() : constantHandler());
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1", () => {
  const address = server.address();
  console.log(`listening on ${typeof address === "object" && address ? address.port : address} (${mode})`);
});
process.on("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeIdleConnections();
});
