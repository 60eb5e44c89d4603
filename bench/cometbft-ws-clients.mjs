// The subscribers of `npm run bench -- cometbft-ws`, in their own process: N WebSocket connections,
// each subscribed to tm.event='NewBlock'. Prints "ready" once every subscription is answered, then
// one JSON line per block that every subscriber received: {height, first, last} as epoch ms.
import WebSocket from "ws";

const [urlArg, countText] = process.argv.slice(2);
const url = urlArg ?? "";
if (url === "") throw new Error("usage: cometbft-ws-clients.mjs <websocket URL> <count>");
const count = Number(countText);
const now = () => performance.timeOrigin + performance.now();
/** height → [received, first, last] */
const blocks = new Map();
let acked = 0;

/**
 * @param {number} i
 * @returns {Promise<void>}
 */
function open(i) {
  return /** @type {Promise<void>} */ (
    new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on("message", (data) => {
      const at = now();
      const text = data.toString();
      if (!text.includes('"query"')) {
        if (text.includes('"error"')) console.error(`subscriber ${i}: ${text.slice(0, 300)}`);
        else if (++acked === count) console.log("ready");
        return;
      }
      const height = /"height": ?"(\d+)"/.exec(text)?.[1];
      if (!height) return;
      const b = blocks.get(height) ?? [0, at, at];
      b[0] += 1;
      b[2] = at;
      blocks.set(height, b);
      if (b[0] === count) {
        console.log(JSON.stringify({ height, first: b[1], last: b[2] }));
        blocks.delete(height);
      }
    });
    ws.once("open", () => {
      ws.send(JSON.stringify({ jsonrpc: "2.0", id: i, method: "subscribe", params: { query: "tm.event='NewBlock'" } }));
      resolve();
    });
    ws.once("error", reject);
    })
  );
}

for (let i = 0; i < count; i += 50) await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => open(i + j)));
