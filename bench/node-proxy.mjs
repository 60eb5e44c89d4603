// The bare proxies `npm run bench -- node` compares the gateway with: node:http in, out to
// UPSTREAM_URL with CLIENT=http (http.request, keep-alive agent; the default) or CLIENT=undici
// (an undici Pool), body and answer passed through untouched.
//   UPSTREAM_URL=http://127.0.0.1:8545 PORT=8546 CLIENT=undici node bench/node-proxy.mjs
import { Agent, createServer, request } from "node:http";
import { Pool } from "undici";

const upstream = new URL(process.env.UPSTREAM_URL ?? "http://127.0.0.1:8545");
const client = process.env.CLIENT ?? "http";

/**
 * Sends `body` upstream and writes the node's answer to `res` (502 when the node cannot be reached).
 * @type {(body: Buffer, res: import("node:http").ServerResponse) => void}
 */
let forward;
if (client === "http") {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  forward = (body, res) => {
    const up = request(upstream, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": body.length } }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, { "content-type": ur.headers["content-type"] ?? "application/json" });
      ur.pipe(res);
    });
    up.on("error", () => res.writeHead(502).end());
    up.end(body);
  };
} else if (client === "undici") {
  const pool = new Pool(upstream.origin, { connections: 64 });
  const path = upstream.pathname + upstream.search;
  forward = (body, res) => {
    pool.request({ path, method: "POST", headers: { "content-type": "application/json" }, body }).then(
      async (ur) => {
        const answer = Buffer.from(await ur.body.arrayBuffer());
        res.writeHead(ur.statusCode, { "content-type": ur.headers["content-type"] ?? "application/json" }).end(answer);
      },
      () => res.writeHead(502).end(),
    );
  };
} else {
  throw new Error(`CLIENT must be http or undici, not ${client}`);
}

createServer((req, res) => {
  /** @type {Buffer[]} */
  const chunks = [];
  req.on("data", (/** @type {Buffer} */ c) => chunks.push(c));
  req.on("end", () => forward(Buffer.concat(chunks), res));
}).listen(Number(process.env.PORT ?? 8546), process.env.HOST ?? "127.0.0.1");

// A clean exit on SIGTERM, so that `node --cpu-prof` writes its profile when the bench stops the proxy.
process.on("SIGTERM", () => process.exit(0));
