/**
 * Upstream nodes that misbehave: one that hangs, answers garbage, answers HTML with 200 or 500,
 * closes in the middle of its body, or resets the connection. In front of a healthy node (a real
 * anvil) the gateway fails over and answers correctly; alone, it answers a clean JSON-RPC error
 * within the pool's deadline, never a 5xx or a hang.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnAnvil, type BareAnvil } from "@/lib/evm/testing";
import { UPSTREAM_TIMEOUT_MS } from "@/lib/evm/upstream";
import { INTERNAL_ERROR } from "@/lib/jsonrpc/errors";
import { configureNetworks } from "@/lib/networks";
import { services } from "@/lib/services";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";

const SLUG = "polygon-amoy";
const CHAIN_ID = 80002;
const BASE_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("UPSTREAM_")));

type Mode = "hang" | "garbage" | "html200" | "html500" | "truncated" | "reset";
const MODES: Mode[] = ["hang", "garbage", "html200", "html500", "truncated", "reset"];

let gw: TestGateway;
let key: string;
let healthy: BareAnvil;
const servers: Server[] = [];
const marker = "0x00000000000000000000000000000000000fa017";

/** A node that answers the chain id check properly (so it is used) and misbehaves on every other call. */
async function badNode(mode: Mode): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      if (body.includes('"eth_chainId"')) {
        const id = (JSON.parse(body) as { id: unknown }).id;
        res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id, result: `0x${CHAIN_ID.toString(16)}` }));
        return;
      }
      switch (mode) {
        case "hang":
          return; // never answers
        case "garbage":
          res.writeHead(200, { "Content-Type": "application/json" }).end('{"jsonrpc":"2.0","id":0,"result":');
          return;
        case "html200":
          res.writeHead(200, { "Content-Type": "text/html" }).end("<html><body>Welcome to nginx!</body></html>");
          return;
        case "html500":
          res.writeHead(500, { "Content-Type": "text/html" }).end("<html>500 Internal Server Error</html>");
          return;
        case "truncated":
          res.writeHead(200, { "Content-Type": "application/json", "Content-Length": "500" });
          res.write('{"jsonrpc":"2.0","id":0,"result":"0x');
          setTimeout(() => res.socket?.destroy(), 20);
          return;
        case "reset":
          req.socket.destroy();
          return;
      }
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function balance(): Promise<{ status: number; body: { result?: string; error?: { code: number; message: string } }; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${gw.url}/node/${SLUG}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-KEY": key },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: [marker, "latest"] }),
    signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_MS * 3),
  });
  return { status: res.status, body: (await res.json()) as { result?: string; error?: { code: number; message: string } }, ms: performance.now() - started };
}

beforeAll(async () => {
  gw = await startTestGateway();
  services().evm.configure({ blockTimeMs: 1000, batchMax: 50 });
  ({ apiKey: key } = await createTestProject("Upstream faults", "ENTERPRISE"));
  healthy = await spawnAnvil({ chainId: CHAIN_ID });
  const set = await fetch(healthy.url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_setBalance", params: [marker, "0x7"] }) });
  expect(set.status).toBe(200);
});

afterAll(async () => {
  configureNetworks(BASE_ENV);
  await healthy?.stop("SIGKILL");
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
  await gw?.stop();
});

describe("a misbehaving upstream", () => {
  for (const mode of MODES) {
    it(`(${mode}) in front of a healthy node: the gateway fails over and answers from the healthy one`, async () => {
      configureNetworks({ ...BASE_ENV, UPSTREAM_POLYGON_AMOY: `${await badNode(mode)},${healthy.url}` });
      const r = await balance();
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ jsonrpc: "2.0", id: 1, result: "0x7" });
    });

    it(`(${mode}) alone: a clean JSON-RPC error within the deadline, naming no more than the node's origin`, async () => {
      const url = await badNode(mode);
      configureNetworks({ ...BASE_ENV, UPSTREAM_POLYGON_AMOY: url });
      const r = await balance();
      expect(r.status).toBe(200);
      expect(r.body.error).toMatchObject({ code: INTERNAL_ERROR, message: expect.stringContaining("upstream unreachable for polygon-amoy") });
      expect(r.ms).toBeLessThan(UPSTREAM_TIMEOUT_MS * 2 + 5000);
    });
  }
});
