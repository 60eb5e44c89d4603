// The bare proxy `npm run bench -- node` compares the gateway with: node:http in, http.request
// (keep-alive agent) out to UPSTREAM_URL, body and answer passed through untouched.
//   UPSTREAM_URL=http://127.0.0.1:8545 PORT=8546 node bench/node-proxy.mjs
import { Agent, createServer, request } from "node:http";

const upstream = new URL(process.env.UPSTREAM_URL ?? "http://127.0.0.1:8545");
const agent = new Agent({ keepAlive: true, maxSockets: 64 });
createServer((req, res) => {
  /** @type {Buffer[]} */
  const chunks = [];
  req.on("data", (/** @type {Buffer} */ c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const up = request(upstream, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": body.length } }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, { "content-type": ur.headers["content-type"] ?? "application/json" });
      ur.pipe(res);
    });
    up.on("error", () => { res.writeHead(502).end(); });
    up.end(body);
  });
}).listen(Number(process.env.PORT ?? 8546), process.env.HOST ?? "127.0.0.1");
