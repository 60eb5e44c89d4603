// The receiver `npm run bench -- webhooks` delivers to: node:http on loopback, answering 200 to
// every POST, recording when each one arrived (wall clock, ms with fractions) and the
// block_number of its first message. GET / answers them as [[blockNumber, ms], ...]; GET /count
// only how many (what the bench polls while it waits, so that waiting costs neither process much).
//
//   PORT=8080 node bench/webhook-receiver.mjs
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";

const now = () => performance.timeOrigin + performance.now();
/** @type {Array<[number, number]>} */
const arrivals = [];
const BLOCK = /"block_number":(\d+)/;

createServer((req, res) => {
  if (req.method === "GET" && req.url === "/count") {
    res.writeHead(200, { "content-type": "application/json" }).end(String(arrivals.length));
    return;
  }
  if (req.method === "GET") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(arrivals));
    return;
  }
  const at = now();
  /** @type {Buffer[]} */
  const chunks = [];
  req.on("data", (/** @type {Buffer} */ c) => chunks.push(c));
  req.on("end", () => {
    const m = BLOCK.exec(Buffer.concat(chunks).toString("utf8"));
    arrivals.push([m ? Number(m[1]) : -1, at]);
    res.writeHead(200, { "content-type": "text/plain", "content-length": 2 }).end("ok");
  });
}).listen(Number(process.env.PORT ?? 8080), "127.0.0.1");
