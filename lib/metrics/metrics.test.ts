// GET /metrics of a running gateway, scraped as Prometheus does, after real work: EVM calls to an
// anvil devnet, a CometBFT call over stored blocks, a webhook subscription followed by the engine
// and delivered to a receiver on loopback, refusals by the plan's limits. Then who may read it, and
// that no request can put its own text in a label. One gateway for the file (real PostgreSQL).
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APTOS_ROUTES } from "@/lib/aptos/catalog";
import { COMETBFT_ENDPOINTS, CONSENSUS_ENDPOINTS } from "@/lib/consensus/catalog";
import { generateBlocks } from "@/lib/consensus/devnet/producer";
import { deleteNetworkIndex } from "@/lib/consensus/store";
import { db } from "@/lib/db/client";
import { ConfigError, databaseUrl, parseEnv } from "@/lib/env";
import { EVM_METHODS } from "@/lib/evm/methods";
import { startTestDevnets, type TestDevnets } from "@/lib/evm/testing";
import { publicMounts } from "@/lib/gateway/mounts";
import { networkBySlug, networks, type Network } from "@/lib/networks";
import { startHttpServer, startMetricsServer } from "@/lib/server";
import { addTestNetworks, createTestProject, startTestGateway, waitFor, type TestGateway } from "@/lib/testing/harness";
import { freePort } from "@/lib/testing/ports";
import { UsageMeter } from "@/lib/usage/meter";
import { WEBHOOK_ROUTES, webhookUsageLabel, type WebhookRouteId } from "@/lib/webhooks/catalog";
import { startDelivery, type DeliveryWorker } from "@/lib/webhooks/delivery/worker";
import { startWebhookEngine, type WebhookEngine } from "@/lib/webhooks/engine/follower";
import { metricsAccess } from "./endpoint";
import { metricsRegistry, NONE, OTHER, UNKNOWN } from "./index";

const TOKEN = randomBytes(24).toString("hex");
const tag = randomBytes(3).toString("hex");

let gw: TestGateway;
let devnets: TestDevnets;
let engine: WebhookEngine;
let delivery: DeliveryWorker;
let receiver: Server;
let receiverUrl: string;
const received: string[] = [];
/** Networks of this suite alone: its counts are exact, and no other suite's follower takes its lock. */
let evm: Network;
let comet: Network;
let enterprise: Awaited<ReturnType<typeof createTestProject>>;

beforeAll(async () => {
  process.env.METRICS_TOKEN = TOKEN;
  gw = await startTestGateway();
  evm = { ...networkBySlug("optimism-sepolia")!, slug: `metrics-evm-${tag}`, network: `metrics${tag}` };
  comet = { ...networkBySlug("babylon-testnet")!, slug: `metrics-comet-${tag}` };
  addTestNetworks(evm, comet);
  devnets = await startTestDevnets({ blockTimeSec: 1, trafficIntervalMs: 5000 });
  enterprise = await createTestProject("Metrics", "ENTERPRISE");
  await Promise.all([generateBlocks(comet, 2, 1), devnets.nodeUrl(evm.slug)]);
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      received.push(body);
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  engine = startWebhookEngine({ databaseUrl: databaseUrl()!, include: (n) => n.slug === evm.slug, pollMs: 200, followerPollMs: 100 });
  delivery = startDelivery({ projectIds: [enterprise.projectId], pollMs: 50, meter: gw.meter });
}, 120_000);

afterAll(async () => {
  await db().webhookSubscription.updateMany({ where: { projectId: enterprise?.projectId }, data: { isActive: false } });
  await engine?.stop();
  await delivery?.stop();
  await devnets?.stop();
  if (comet) await deleteNetworkIndex(comet.slug);
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  await gw?.stop();
  delete process.env.METRICS_TOKEN;
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus's text format, as its scraper reads it. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

async function scrape(url = gw.url, headers: Record<string, string> = { Authorization: `Bearer ${TOKEN}` }): Promise<{ text: string; samples: Sample[] }> {
  const res = await fetch(`${url}/metrics`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { text, samples: parseExposition(text) };
}

/** The value of the one sample named `name` with exactly `labels` (undefined when there is none). */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.keys(s.labels).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  expect(found.length, `${name}${JSON.stringify(labels)}`).toBeLessThanOrEqual(1);
  return found[0]?.value;
}

const post = (path: string, body: unknown, key = enterprise.apiKey) =>
  fetch(`${gw.url}${path}`, { method: "POST", headers: { "Content-Type": "application/json", "X-API-KEY": key }, body: JSON.stringify(body) });
const call = (method: string, id: number | string = 1) => ({ jsonrpc: "2.0", id, method, params: [] });

describe("GET /metrics after real work", () => {
  it("counts requests, CU and latency by interface, network, method and status; upstream calls; the follower; enqueued and delivered messages", async () => {
    for (const id of [1, 2]) expect((await post(`/node/${evm.slug}`, call("eth_blockNumber", id))).status).toBe(200);
    expect((await post(`/node/${evm.slug}`, [call("eth_blockNumber", 3), call("eth_chainId", 4)])).status).toBe(200);
    const unknown = (await (await post(`/node/${evm.slug}`, call("eth_notAMethod"))).json()) as { error?: { code: number } };
    expect(unknown.error?.code).toBe(-32601);
    const status = await post(`/cometbft/${comet.slug}`, call("status"));
    expect(status.status).toBe(200);
    expect(((await status.json()) as { result?: unknown }).result).toBeDefined();
    const created = await post(`/v1/${evm.protocol}/${evm.network}/webhooks`, {
      eventType: "BLOCK_PERIOD",
      description: "every block",
      notification: { webhookUrl: receiverUrl },
      isInstant: true,
      condition: { period: 1 },
    });
    expect(created.status).toBe(201);
    await waitFor("a delivery to the receiver", () => (received.length > 0 ? true : undefined));
    await gw.meter.flush();
    // The delivery is counted once recorded, just after the receiver answered.
    const { text, samples } = await waitFor("the delivery to be counted", async () => {
      const s = await scrape();
      return (valueOf(s.samples, "blockgate_webhook_delivery_attempts_total", { network: evm.slug, outcome: "success" }) ?? 0) > 0 ? s : undefined;
    });

    const requests = (labels: Record<string, string>) => valueOf(samples, "blockgate_gateway_requests_total", labels);
    const onEvm = { interface: "evm", network: evm.slug };
    expect(requests({ ...onEvm, method: "eth_blockNumber", status: "2xx" })).toBe(2);
    expect(requests({ ...onEvm, method: "batch", status: "2xx" })).toBe(1);
    expect(requests({ ...onEvm, method: "unsupported", status: "rpc_error" })).toBe(1);
    expect(valueOf(samples, "blockgate_gateway_cu_total", { ...onEvm, method: "eth_blockNumber", status: "2xx" })).toBe(2 * EVM_METHODS.eth_blockNumber!.cu);
    expect(valueOf(samples, "blockgate_gateway_cu_total", { ...onEvm, method: "batch", status: "2xx" })).toBe(EVM_METHODS.eth_blockNumber!.cu + EVM_METHODS.eth_chainId!.cu);
    expect(valueOf(samples, "blockgate_gateway_cu_total", { ...onEvm, method: "unsupported", status: "rpc_error" })).toBe(0);
    // The latency histogram: cumulative buckets up to +Inf, equal to the count.
    const single = { ...onEvm, method: "eth_blockNumber", status: "2xx" };
    expect(valueOf(samples, "blockgate_gateway_request_duration_seconds_count", single)).toBe(2);
    expect(valueOf(samples, "blockgate_gateway_request_duration_seconds_bucket", { ...single, le: "+Inf" })).toBe(2);
    const buckets = samples.filter((s) => s.name === "blockgate_gateway_request_duration_seconds_bucket" && s.labels.method === "eth_blockNumber" && s.labels.network === evm.slug).map((s) => s.value);
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b));
    expect(valueOf(samples, "blockgate_gateway_request_duration_seconds_sum", single)).toBeGreaterThan(0);
    expect(requests({ interface: "cometbft", network: comet.slug, method: "status", status: "2xx" })).toBe(1);
    expect(requests({ interface: "webhooks", network: evm.slug, method: webhookUsageLabel("create"), status: "2xx" })).toBe(1);

    const upstream = { network: evm.slug, upstream: "devnet" };
    expect(valueOf(samples, "blockgate_upstream_calls_total", { ...upstream, outcome: "ok" })).toBeGreaterThan(0);
    expect(valueOf(samples, "blockgate_upstream_call_duration_seconds_count", { ...upstream, outcome: "ok" })).toBe(valueOf(samples, "blockgate_upstream_calls_total", { ...upstream, outcome: "ok" }));
    expect(valueOf(samples, "blockgate_upstream_up", upstream)).toBe(1);

    const stream = { follower: "webhooks", network: evm.slug, stream: "instant" };
    const block = valueOf(samples, "blockgate_follower_block", stream)!;
    expect(block).toBeGreaterThan(0);
    expect(valueOf(samples, "blockgate_follower_head_block", stream)).toBeGreaterThanOrEqual(block);
    expect(valueOf(samples, "blockgate_follower_blocks_behind", stream)).toBeGreaterThanOrEqual(0);
    expect(valueOf(samples, "blockgate_follower_lag_seconds", stream)).toBeGreaterThanOrEqual(0);
    expect(valueOf(samples, "blockgate_leader_locks_held", { kind: "webhook-follower" })).toBeGreaterThanOrEqual(1);
    expect(valueOf(samples, "blockgate_webhook_messages_enqueued_total", { network: evm.slug, source: "chain", outcome: "queued" })).toBeGreaterThanOrEqual(received.length);
    expect(valueOf(samples, "blockgate_webhook_delivery_duration_seconds_count", { network: evm.slug, outcome: "success" })).toBeGreaterThan(0);
    // Read by one query at the scrape (other suites' messages count too: the database is shared).
    expect(valueOf(samples, "blockgate_webhook_queue_due")).toBeGreaterThanOrEqual(0);
    expect(valueOf(samples, "blockgate_webhook_queue_oldest_due_seconds")).toBeGreaterThanOrEqual(0);
    expect(valueOf(samples, "blockgate_webhook_subscriptions_disabled")).toBeGreaterThanOrEqual(0);

    expect(valueOf(samples, "blockgate_flush_duration_seconds_count", { store: "usage" })).toBeGreaterThanOrEqual(1);
    expect(valueOf(samples, "blockgate_limits_shared")).toBe(0);
    expect(valueOf(samples, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
    expect(valueOf(samples, "nodejs_eventloop_lag_seconds")).toBeGreaterThanOrEqual(0);
    expect(text).toContain("# TYPE nodejs_gc_duration_seconds histogram");

    // Nothing of a project, a key or a receiver in any label.
    const secrets = [enterprise.apiKey, enterprise.projectId, enterprise.userId, receiverUrl, "127.0.0.1"];
    for (const s of samples) for (const v of Object.values(s.labels)) for (const secret of secrets) expect(v).not.toContain(secret);
  });

  it("counts calls refused by the CU per second and by the allowance", async () => {
    const free = await createTestProject("Metrics rate");
    const answers = (await (await post(`/node/${evm.slug}`, Array.from({ length: 100 }, (_, i) => call("eth_chainId", i)), free.apiKey)).json()) as Array<{ error?: { code: number } }>;
    const limited = answers.filter((a) => a.error?.code === -32005).length;
    expect(limited).toBeGreaterThan(0);

    const spent = await createTestProject("Metrics quota");
    const key = await db().apiKey.findFirstOrThrow({ where: { projectId: spent.projectId } });
    const now = Date.now();
    await db().usageDay.create({ data: { projectId: spent.projectId, keyId: key.id, network: evm.slug, api: "node", endpoint: "eth_chainId", day: new Date(now - (now % 86_400_000)), cu: 1_000_000n, requests: 1 } });
    const refused = await post(`/node/${evm.slug}`, call("eth_chainId"), spent.apiKey);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { code: string }).code).toBe("EXCEEDED_QUOTA_LIMIT");

    const { samples } = await scrape();
    expect(valueOf(samples, "blockgate_gateway_refusals_total", { interface: "evm", network: evm.slug, reason: "rate_limit" })).toBe(limited);
    expect(valueOf(samples, "blockgate_gateway_refusals_total", { interface: "evm", network: evm.slug, reason: "quota" })).toBe(1);
    expect(valueOf(samples, "blockgate_gateway_requests_total", { interface: "evm", network: evm.slug, method: "rejected", status: "4xx" })).toBe(1);
  });
});

describe("a follower that stops", () => {
  it("leaves no gauges behind, nor its leader lock", async () => {
    await db().webhookSubscription.updateMany({ where: { projectId: enterprise.projectId }, data: { isActive: false } });
    await waitFor("the follower to stop", () => (engine.followed().length === 0 ? true : undefined));
    const { samples } = await scrape();
    expect(samples.filter((s) => s.name.startsWith("blockgate_follower_") && s.labels.network === evm.slug)).toEqual([]);
    expect(valueOf(samples, "blockgate_leader_locks_held", { kind: "webhook-follower" })).toBeUndefined();
  });
});

describe("who may read /metrics", () => {
  it("wants the token as a Bearer token once METRICS_TOKEN is set, and takes only GET", async () => {
    for (const headers of [{}, { Authorization: `Bearer ${TOKEN}x` }, { Authorization: TOKEN }] as Array<Record<string, string>>) {
      const res = await fetch(`${gw.url}/metrics`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
      expect(await res.json()).toEqual({ code: "AUTHENTICATION_FAILED", message: expect.stringContaining("METRICS_TOKEN") });
    }
    const posted = await fetch(`${gw.url}/metrics`, { method: "POST", headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(posted.status).toBe(405);
    expect((await scrape(gw.url, { Authorization: `bearer  ${TOKEN}` })).text).toContain("blockgate_gateway_requests_total");
  });

  it("is open in the local default, off the public port with DATABASE_URL, and open on METRICS_PORT's listener", async () => {
    const secrets = { APP_SECRET: "a".repeat(32), NEXTAUTH_SECRET: "b".repeat(32), NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: randomBytes(32).toString("base64") };
    const local = parseEnv({ DATA_DIR: await mkdtemp(path.join(os.tmpdir(), "blockgate-metrics-")) });
    const production = parseEnv({ ...secrets, NODE_ENV: "production", DATABASE_URL: "postgres://db/blockgate" });
    expect(metricsAccess("public", local)).toEqual({ kind: "open" });
    expect(metricsAccess("public", production)).toEqual({ kind: "off" });
    expect(metricsAccess("private", production)).toEqual({ kind: "open" });
    expect(metricsAccess("public", { ...production, METRICS_TOKEN: TOKEN })).toEqual({ kind: "token", token: TOKEN });
    expect(metricsAccess("private", { ...production, METRICS_TOKEN: TOKEN })).toEqual({ kind: "token", token: TOKEN });
    expect(() => parseEnv({ ...secrets, DATABASE_URL: "postgres://db/blockgate", PORT: "3000", METRICS_PORT: "3000" })).toThrow(ConfigError);
    expect(() => parseEnv({ ...secrets, DATABASE_URL: "postgres://db/blockgate", METRICS_TOKEN: "short" })).toThrow(/METRICS_TOKEN/);

    const meter = new UsageMeter();
    const publicPort = await startHttpServer({ host: "127.0.0.1", port: await freePort(), meter, metrics: metricsAccess("public", production) });
    const own = await startMetricsServer("127.0.0.1", await freePort(), metricsAccess("private", production));
    const open = await startHttpServer({ host: "127.0.0.1", port: await freePort(), meter, metrics: metricsAccess("public", local) });
    try {
      const off = await fetch(`${publicPort.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(off.status).toBe(404);
      expect(await off.json()).toEqual({ code: "WRONG_ENDPOINT", message: expect.stringContaining("METRICS_PORT") });
      expect((await scrape(own.url, {})).text).toContain("blockgate_gateway_requests_total");
      expect((await fetch(`${own.url}/`)).status).toBe(404);
      expect((await scrape(open.url, {})).text).toContain("nodejs_heap_size_used_bytes");
    } finally {
      await Promise.all([publicPort.close(), own.close(), open.close()]);
    }
  });
});

describe("label cardinality", () => {
  it("stays within the catalog's names whatever methods, paths, networks and keys callers send", async () => {
    const methodNames = new Set([
      ...Object.keys(EVM_METHODS),
      ...Object.keys(CONSENSUS_ENDPOINTS),
      ...Object.keys(COMETBFT_ENDPOINTS),
      ...Object.keys(APTOS_ROUTES),
      ...(Object.keys(WEBHOOK_ROUTES) as WebhookRouteId[]).map(webhookUsageLabel),
      ...["invalid", "unsupported", "rejected", "batch", "open", OTHER],
    ]);
    const bounded: Record<string, Set<string>> = {
      interface: new Set(publicMounts().map((m) => m.interface ?? m.prefix)),
      network: new Set([...networks().map((n) => n.slug), NONE, UNKNOWN]),
      method: methodNames,
      status: new Set(["2xx", "4xx", "5xx", "rpc_error"]),
      reason: new Set(["rate_limit", "quota"]),
    };
    // Any text, and text shaped like a method name or a slug (what a label could pass for).
    const text = fc.oneof(fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }), fc.stringMatching(/^[a-z][a-zA-Z0-9_.:-]{7,30}$/));
    const printable = fc.stringMatching(/^[\x21-\x7e]{1,40}$/);
    const sent: string[] = [];
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          // Mostly a mount with a network it serves, and the valid key: requests that reach the endpoints.
          target: fc.oneof(
            { weight: 3, arbitrary: fc.constantFrom<[string, string]>(["node", evm.slug], ["cometbft", comet.slug], ["rpc", comet.slug], ["aptos", "aptos-testnet"], ["v1", `${evm.protocol}/${evm.network}`]) },
            { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...publicMounts().map((m) => m.prefix)), text) },
          ),
          rest: fc.array(text, { maxLength: 3 }),
          key: fc.oneof({ weight: 3, arbitrary: fc.constant(enterprise.apiKey) }, { weight: 1, arbitrary: printable }),
          keyInPath: fc.boolean(),
          method: fc.oneof({ weight: 3, arbitrary: fc.constant("POST") }, { weight: 1, arbitrary: fc.constantFrom("GET", "PUT", "DELETE") }),
          calls: fc.array(fc.record({ method: fc.oneof(text, fc.constantFrom("eth_chainId", "status")), params: fc.jsonValue({ maxDepth: 2 }) }), { minLength: 1, maxLength: 3 }),
        }),
        async (r) => {
          const [prefix, network] = r.target;
          sent.push(network, r.key, ...r.rest, ...r.calls.map((c) => c.method));
          const segments = [prefix, ...network.split("/"), ...r.rest, ...(r.keyInPath ? [r.key] : [])].map(encodeURIComponent);
          const body = r.calls.length === 1 ? { jsonrpc: "2.0", id: 1, ...r.calls[0] } : r.calls.map((c, id) => ({ jsonrpc: "2.0", id, ...c }));
          const res = await fetch(`${gw.url}/${segments.join("/")}`, {
            method: r.method,
            headers: { "Content-Type": "application/json", ...(r.keyInPath ? {} : { "X-API-KEY": r.key }) },
            body: r.method === "GET" ? undefined : JSON.stringify(body),
          });
          await res.arrayBuffer();
          expect(res.status).not.toBe(500);
        },
      ),
      { numRuns: 200 },
    );
    const { samples } = await scrape();
    // What callers sent, but for the real names among it and text short enough to be part of one by chance.
    const allowed = Object.values(bounded).flatMap((values) => [...values]);
    const distinct = [...new Set(sent)].filter((s) => s.length >= 8 && s !== enterprise.apiKey && !allowed.some((v) => v.includes(s)));
    const values = new Set(samples.filter((x) => x.name.startsWith("blockgate_gateway_")).flatMap((x) => Object.entries(x.labels).filter(([label]) => label !== "le").map(([label, value]) => `${label}=${value}`)));
    expect(values.size).toBeGreaterThan(5);
    const unbounded = [...values].filter((lv) => !bounded[lv.slice(0, lv.indexOf("="))]?.has(lv.slice(lv.indexOf("=") + 1)));
    expect(unbounded).toEqual([]);
    expect([...values].filter((lv) => distinct.some((input) => lv.includes(input)))).toEqual([]);
    expect(distinct.length).toBeGreaterThan(50);
  });
});

describe("the Grafana dashboard", () => {
  it("uses only metrics the registry has", async () => {
    const dashboard = JSON.parse(await readFile(path.join(import.meta.dirname, "../../ops/grafana/blockgate.json"), "utf8")) as { panels: Array<{ targets?: Array<{ expr: string }> }> };
    const exprs = dashboard.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
    expect(exprs.length).toBeGreaterThan(10);
    const registered = new Set(metricsRegistry().getMetricsAsArray().map((m) => (m as unknown as { name: string }).name));
    const used = new Set(exprs.flatMap((e) => [...e.matchAll(/\b((?:blockgate|nodejs|process)_[a-z0-9_]+)/g)].map((m) => m[1]!)));
    expect(used.size).toBeGreaterThan(10);
    for (const name of used) {
      const base = name.replace(/_(bucket|sum|count)$/, "");
      expect(registered.has(name) || registered.has(base), name).toBe(true);
    }
  });
});
