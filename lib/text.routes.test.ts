// The text boundary (lib/text.ts) on every route that takes a JSON body. Public routes, listed from
// the webhook API's OpenAPI document and the consensus catalogs, get bodies with one key or value
// replaced by NUL, an unpaired surrogate or bytes that are not UTF-8, through the real gateway:
// never a 5xx, and where the body may be stored a 400 naming the field. Console routes run in
// Next.js with a session, so their property test is e2e/text-boundary.spec.ts; here, the check that
// its list names every route under app/api that reads a body.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSENSUS_ENDPOINTS, COMETBFT_ENDPOINTS, type CometbftParamType, type ParamType } from "@/lib/consensus/catalog";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";
import { CONSOLE_JSON_ROUTES, hostileBody } from "@/lib/testing/hostile-bodies";

type Json = Parameters<typeof hostileBody>[0];

let gw: TestGateway;
let key: string;
let subscriptionId: string;

beforeAll(async () => {
  // Metering off: refusals are what is tested, not the plan's CU per second.
  gw = await startTestGateway({ metering: false });
  ({ apiKey: key } = await createTestProject("Text boundary", "ENTERPRISE"));
  const created = await send("POST", "/v1/ethereum/mainnet/webhooks", JSON.stringify(LOG));
  expect(created.status, created.text).toBe(201);
  subscriptionId = (JSON.parse(created.text) as { subscriptionId: string }).subscriptionId;
});
afterAll(async () => gw?.stop());

async function send(method: string, url: string, body: string | Uint8Array<ArrayBuffer>) {
  const res = await fetch(gw.url + url, { method, headers: { "Content-Type": "application/json", "X-API-KEY": key }, body });
  return { status: res.status, text: await res.text() };
}

const LOG = {
  eventType: "LOG",
  description: "Transfers",
  notification: { webhookUrl: "https://receiver.example/hooks" },
  isInstant: true,
  condition: { address: "0x5fbdb2315678afecb367f032d93f642f64180aa3", topics: ["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef", null] },
};
const TRANSACTION = {
  eventType: "TRANSACTION",
  description: "Deposits",
  notification: { webhookUrl: "https://receiver.example/aptos" },
  condition: { eventType: "0x1::coin::CoinDeposit", eventAccountAddress: "0x0", eventData: { amount: "100", coin: { type: "0x1::aptos_coin::AptosCoin" } } },
};

/** Per operation of the OpenAPI document that takes JSON: where to send it, and bodies it takes. */
const WEBHOOK_BODIES: Record<string, Array<{ url: () => string; body: Json }>> = {
  "POST /v1/{protocol}/{network}/webhooks": [
    { url: () => "/v1/ethereum/mainnet/webhooks", body: LOG },
    { url: () => "/v1/aptos/mainnet/webhooks", body: TRANSACTION },
  ],
  "POST /v1/{protocol}/{network}/webhooks/preview": [{ url: () => "/v1/aptos/mainnet/webhooks/preview", body: TRANSACTION }],
  "PATCH /v1/{protocol}/{network}/webhooks/{subscriptionId}": [
    { url: () => `/v1/ethereum/mainnet/webhooks/${subscriptionId}`, body: { description: "Renamed", notification: { webhookUrl: "https://receiver.example/new" }, isActive: true, condition: LOG.condition } },
  ],
  "POST /v1/{protocol}/{network}/webhooks/{subscriptionId}/replay": [{ url: () => `/v1/ethereum/mainnet/webhooks/${subscriptionId}/replay`, body: { fromBlock: 1, toBlock: "2" } }],
};

const RUNS = 50;

describe("public routes", () => {
  it("the webhook API's: every operation with a JSON body is tested here", async () => {
    const doc = (await (await fetch(`${gw.url}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>> };
    const withJson = Object.entries(doc.paths).flatMap(([p, ops]) => Object.entries(ops).filter(([, op]) => op.requestBody?.content["application/json"]).map(([m]) => `${m.toUpperCase()} ${p}`));
    expect(withJson.sort()).toEqual(Object.keys(WEBHOOK_BODIES).sort());
  });

  it.each(Object.entries(WEBHOOK_BODIES))("%s: refuses text it cannot store with 400 naming the field, never 5xx", async (operation, samples) => {
    for (const { url, body } of samples) {
      const valid = await send(operation.split(" ")[0]!, url(), JSON.stringify(body));
      // The valid body is taken (preview and replay may find no chain here: 503).
      expect([200, 201, 503], `${valid.status} ${valid.text}`).toContain(valid.status);
      await fc.assert(
        fc.asyncProperty(hostileBody(body), async (h) => {
          const r = await send(operation.split(" ")[0]!, url(), h.bytes);
          expect(r.status, `${h.what}: ${r.text}`).toBe(400);
          const answer = JSON.parse(r.text) as { code: string; message: string };
          expect(answer.code, h.what).toBe("INVALID_PARAMETER");
          expect(h.refusalNames(answer.message), `${h.what}: ${answer.message}`).toBe(true);
        }),
        { numRuns: RUNS },
      );
    }
  });

  // JSON-RPC bodies are answered, not stored: hostile text is an invalid parameter or matches nothing.
  const sample = (type: ParamType | CometbftParamType): string =>
    ({ height: "1", int: "1", query: "tx.height > 0", bool: "false", order: "asc", hash: "0x" + "ab".repeat(32), bytes: "dGVzdA==", hexbytes: "00", string: "/app/version" })[type];
  const calls = (catalog: Record<string, { params: readonly { name: string; type: ParamType | CometbftParamType }[] }>) =>
    Object.entries(catalog).map(([method, spec]) => ({ jsonrpc: "2.0", id: "1", method, params: Object.fromEntries(spec.params.map((p) => [p.name, sample(p.type)])) }));
  it.each([
    ["/rpc/babylon-mainnet", calls(CONSENSUS_ENDPOINTS)],
    ["/cometbft/babylon-mainnet", calls(COMETBFT_ENDPOINTS)],
  ])("%s: answers JSON-RPC bodies holding such text without a 5xx", async (url, bodies) => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...bodies).chain((b) => hostileBody(b)),
        async (h) => {
          const r = await send("POST", url, h.bytes);
          // 204: the id's key was replaced, so the call is a notification.
          expect([200, 204], `${h.what}: ${r.status} ${r.text}`).toContain(r.status);
          if (r.status === 200) expect(JSON.parse(r.text), h.what).toMatchObject({ jsonrpc: "2.0" });
        },
      ),
      { numRuns: 4 * RUNS },
    );
  });
});

/** The app/api routes whose handlers read a body: their folder, and the POST/PUT/PATCH methods they export. */
function consoleRoutesReadingBodies(): string[] {
  const root = path.resolve(import.meta.dirname, "..");
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (entry.name === "route.ts") {
        const source = readFileSync(path.join(root, rel), "utf8");
        if (!/parseBody\(|readJsonBody\(|\.json\(\)|\.text\(\)|\.arrayBuffer\(\)|\.formData\(\)/.test(source)) continue;
        for (const m of source.matchAll(/export const (POST|PUT|PATCH)\b|\bas (POST|PUT|PATCH)\b/g)) found.push(`${m[1] ?? m[2]} ${dir}`);
      }
    }
  };
  walk("app/api");
  return found.sort();
}

describe("console routes", () => {
  it("e2e/text-boundary.spec.ts covers every route under app/api that reads a body", () => {
    const covered = CONSOLE_JSON_ROUTES.map((r) => `${r.method} ${r.route}`).sort();
    expect(covered).toEqual(consoleRoutesReadingBodies());
  });
});
