/**
 * 10,000 hostile requests from a property-based fuzzer (fast-check) against every public endpoint
 * of a real server: random JSON and non-JSON, deep nesting, huge numbers, wrong types, invalid
 * UTF-8, odd content types, giant ids, batches of junk. Every answer must be the documented
 * shape, never a 5xx, never slower than 10 s; the server's heap must come back near where it was.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSENSUS_METHODS } from "@/lib/consensus/catalog";
import { EVM_METHODS } from "@/lib/evm/methods";
import { startTestDevnets, type TestDevnets } from "@/lib/evm/testing";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";

const RUNS = 10_000;
let gw: TestGateway;
let devnets: TestDevnets;
let key: string;

beforeAll(async () => {
  gw = await startTestGateway();
  devnets = await startTestDevnets();
  ({ apiKey: key } = await createTestProject("Fuzz", "ENTERPRISE"));
  await devnets.nodeUrl("ethereum-sepolia");
});
afterAll(async () => {
  await devnets?.stop();
  await gw?.stop();
});

const methodName = fc.oneof(fc.constantFrom(...Object.keys(EVM_METHODS), ...CONSENSUS_METHODS, "anvil_mine", "admin_peers", ""), fc.string({ maxLength: 40 }));
const id = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 30 }),
  fc.constant(null),
  fc.boolean(),
  fc.constant({}),
  fc.bigInt().map((n) => ({ __raw: n.toString() })),
);
const requestObject = fc.record(
  { jsonrpc: fc.oneof(fc.constant("2.0"), fc.constant("1.0"), fc.anything()), id, method: methodName, params: fc.oneof(fc.anything({ maxDepth: 3 }), fc.array(fc.oneof(fc.string({ unit: fc.constantFrom(..."0123456789abcdefx"), maxLength: 66 }), fc.string(), fc.constant("latest")), { maxLength: 4 })) },
  { requiredKeys: [] },
);
/** JSON text of a value, with `{ __raw }` markers written as bare (possibly huge) numbers. */
const text = (v: unknown) => JSON.stringify(v).replace(/\{"__raw":"(-?\d+)"\}/g, "$1");
const body = fc.oneof(
  requestObject.map(text),
  fc.array(requestObject, { maxLength: 120 }).map(text),
  fc.json({ maxDepth: 4 }),
  fc.string({ maxLength: 200 }),
  fc.integer({ min: 1, max: 5000 }).map((n) => "[".repeat(n) + "]".repeat(n)),
  fc.integer({ min: 1, max: 3000 }).map((n) => `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":${"[".repeat(n)}${"]".repeat(n)}}`),
  fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
  fc.constant(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])), // invalid UTF-8 inside JSON
);
const contentType = fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded", "", "application/json; charset=latin1", "multipart/form-data; boundary=x");
const target = fc.oneof(
  fc.constant({ method: "POST", path: () => "/node/ethereum-sepolia", header: true }),
  fc.constant({ method: "POST", path: () => `/node/ethereum-sepolia/${key}`, header: false }),
  fc.constant({ method: "POST", path: () => "/rpc/babylon-testnet", header: true }),
  fc.constant({ method: "POST", path: () => "/v1/ethereum/sepolia/webhooks", header: true }),
  fc.tuple(fc.constantFrom(...CONSENSUS_METHODS, "nope"), fc.dictionary(fc.constantFrom("height", "query", "page", "per_page", "order_by", "hash", "prove", "id", "x"), fc.string({ maxLength: 80 }), { maxKeys: 4 })).map(
    ([method, query]) => ({ method: "GET", path: () => `/rpc/babylon-testnet/${method}?${new URLSearchParams(query).toString()}`, header: true }),
  ),
);

function documentedShape(status: number, raw: string): void {
  if (status === 204) {
    expect(raw).toBe("");
    return;
  }
  const json = JSON.parse(raw) as unknown;
  const isEnvelope = (v: unknown) =>
    typeof v === "object" && v !== null && (v as { jsonrpc?: unknown }).jsonrpc === "2.0" && ("result" in v || ("error" in v && typeof (v as { error: { code?: unknown } }).error.code === "number"));
  const isRest = (v: unknown) => typeof v === "object" && v !== null && typeof (v as { code?: unknown }).code === "string" && typeof (v as { message?: unknown }).message === "string";
  const ok = isRest(json) || isEnvelope(json) || (Array.isArray(json) && json.length > 0 && json.every(isEnvelope));
  expect(ok, `status ${status}: ${raw.slice(0, 300)}`).toBe(true);
}

const gc = (globalThis as { gc?: () => void }).gc;

describe("hostile bodies", () => {
  it(`answers ${RUNS} fuzzed requests with documented shapes, no 5xx, no hang, and gives its memory back`, async () => {
    expect(gc, "run with --expose-gc (vitest.faults.config.mts)").toBeTypeOf("function");
    gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    let count = 0;
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(target, body, contentType, async (t, b, ct) => {
        count++;
        const headers: Record<string, string> = {};
        if (ct) headers["Content-Type"] = ct;
        if (t.header) headers["X-API-KEY"] = key;
        const res = await fetch(gw.url + t.path(), { method: t.method, headers, body: t.method === "GET" ? undefined : b, signal: AbortSignal.timeout(10_000) });
        const raw = await res.text();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        expect(res.status, raw.slice(0, 300)).toBeLessThan(500);
        documentedShape(res.status, raw);
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
    expect(count).toBe(RUNS);
    // Several kinds of answers were exercised, not only one refusal.
    expect([...statuses.keys()].length).toBeGreaterThanOrEqual(3);
    gc?.();
    await new Promise((r) => setTimeout(r, 500));
    gc?.();
    const heapAfter = process.memoryUsage().heapUsed;
    expect(heapAfter - heapBefore, `heap grew from ${heapBefore} to ${heapAfter} bytes`).toBeLessThan(64 * 1024 * 1024);
  });
});
