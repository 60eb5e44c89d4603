// Traces of the running service, as a collector receives them: an OTLP/HTTP receiver in this
// process stands in for the collector (OTEL_EXPORTER_OTLP_ENDPOINT). One node call forwarded to an
// anvil (behind a proxy that records what the node was sent) with the caller's traceparent, and one
// webhook message followed from a block of that anvil and delivered to a receiver on loopback.
// First, with no endpoint: nothing of the SDK is loaded (this process has not loaded it yet then).
import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, disconnectDb, rawPool } from "@/lib/db/client";
import { resetEnv } from "@/lib/env";
import { spawnAnvil, type BareAnvil } from "@/lib/evm/testing";
import { EvmUpstream } from "@/lib/evm/upstream";
import { networkBySlug, type Network } from "@/lib/networks";
import { startService, type Service } from "@/lib/runtime";
import { addTestNetworks, connectTestDatabase, createTestProject } from "@/lib/testing/harness";
import { freePort } from "@/lib/testing/ports";
import { startDelivery, type DeliveryWorker } from "@/lib/webhooks/delivery/worker";
import { startWebhookEngine, type WebhookEngine } from "@/lib/webhooks/engine/follower";
import { markSpan, SpanKind, startTracing, stopTracing, tracingOn, withSpan } from "./tracing";

/** Whether any of the OpenTelemetry SDK's modules (not the API's) is loaded in this process. */
const sdkLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((f) => /[\\/]@opentelemetry[\\/](sdk-trace|exporter-|instrumentation|resources|core)/.test(f));

const CHAIN_ID = 11155111;
const NETWORK: Network = { ...networkBySlug("ethereum-sepolia")!, slug: "ethereum-traces", network: "traces", source: { kind: "upstream", urls: [] }, activeChainId: CHAIN_ID };

/** OTLP's span kinds. */
const KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
  status: { code?: number; message?: string };
  resource: Record<string, unknown>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number; arrayValue?: { values?: OtlpValue[] } };
type OtlpAttributes = Array<{ key: string; value: OtlpValue }> | undefined;
interface OtlpRequest {
  resourceSpans: Array<{
    resource: { attributes?: OtlpAttributes };
    scopeSpans: Array<{ spans: Array<Omit<Span, "attributes" | "links" | "resource" | "parentSpanId"> & { parentSpanId?: string; attributes?: OtlpAttributes; links?: Array<{ traceId: string; spanId: string }> }> }>;
  }>;
}

const valueOf = (v: OtlpValue): unknown =>
  v.arrayValue ? (v.arrayValue.values ?? []).map(valueOf) : v.intValue !== undefined ? Number(v.intValue) : (v.stringValue ?? v.boolValue ?? v.doubleValue);
const record = (attributes: OtlpAttributes) => Object.fromEntries((attributes ?? []).map((a) => [a.key, valueOf(a.value)]));

/** What the collector received: every request's body as sent (JSON), and the spans in them. */
const collected = { bodies: [] as string[], contentTypes: new Set<string>(), spans: [] as Span[] };
/** What the upstream node was sent through the proxy. */
const upstreamRequests: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
const delivered: Array<{ headers: IncomingHttpHeaders; body: string }> = [];

function listen(handle: (headers: IncomingHttpHeaders, body: string, url: string) => Promise<{ status: number; body: string }>): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      handle(req.headers, Buffer.concat(chunks).toString("utf8"), req.url ?? "/").then(
        (answer) => res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body),
        () => res.writeHead(502).end(),
      );
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

async function waitFor<T>(what: string, check: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  for (const until = Date.now() + timeoutMs; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
    const value = await check();
    if (value !== undefined) return value;
  }
  throw new Error(`timed out waiting for ${what}`);
}

const hex = (bytes: number) => randomBytes(bytes).toString("hex");
const spansOf = (traceId: string) => collected.spans.filter((s) => s.traceId === traceId);
const servers: Server[] = [];
let receiverUrl: string;
let upstreamUrl: string;
let anvil: BareAnvil;
let service: Service;
let engine: WebhookEngine;
let delivery: DeliveryWorker;
let project: Awaited<ReturnType<typeof createTestProject>>;
const savedEnv = { ...process.env };

describe("with OTEL_EXPORTER_OTLP_ENDPOINT unset", () => {
  it("loads nothing of the SDK, and spans are not recorded", async () => {
    await startTracing({ OTEL_SERVICE_NAME: "blockgate", ROLE: "all" });
    expect(tracingOn()).toBe(false);
    expect(withSpan("x", {}, (span) => span.isRecording())).toBe(false);
    expect(markSpan("x", SpanKind.PRODUCER, {})).toBeNull();
    expect(sdkLoaded()).toBe(false);
  });
});

describe("traces sent to an OTLP/HTTP collector", () => {
  beforeAll(async () => {
    const databaseUrl = await connectTestDatabase();
    const collector = await listen(async (headers, body, url) => {
      expect(url).toBe("/v1/traces");
      collected.bodies.push(body);
      collected.contentTypes.add(String(headers["content-type"]));
      for (const rs of (JSON.parse(body) as OtlpRequest).resourceSpans) {
        const resource = record(rs.resource.attributes);
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) collected.spans.push({ ...s, parentSpanId: s.parentSpanId ?? "", attributes: record(s.attributes), links: s.links ?? [], resource });
        }
      }
      return { status: 200, body: "{}" };
    });
    anvil = await spawnAnvil({ chainId: CHAIN_ID, blockTimeSec: 1 });
    const proxy = await listen(async (headers, body) => {
      upstreamRequests.push({ headers, body });
      const answer = await fetch(anvil.url, { method: "POST", headers: { "content-type": "application/json" }, body });
      return { status: answer.status, body: await answer.text() };
    });
    const receiver = await listen(async (headers, body) => {
      delivered.push({ headers, body });
      return { status: 200, body: "{}" };
    });
    servers.push(collector.server, proxy.server, receiver.server);
    receiverUrl = receiver.url;
    upstreamUrl = proxy.url;
    addTestNetworks({ ...NETWORK, source: { kind: "upstream", urls: [proxy.url] } });
    project = await createTestProject("Traces", "DEVELOPER");
    Object.assign(process.env, {
      HOST: "127.0.0.1",
      PORT: String(await freePort()),
      // Web alone: no delivery worker or sweep of this service touches what other suites keep in the
      // shared database; this suite follows its own network and delivers its own project's messages.
      ROLE: "web",
      DEVNETS: "off",
      WEBHOOK_ALLOW_PRIVATE_URLS: "on",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: "blockgate-traces-test",
      // The SDK's own setting: batches go out every 100 ms, not every 5 s.
      OTEL_BSP_SCHEDULE_DELAY: "100",
    });
    resetEnv();
    service = await startService({ withNext: false });
    engine = startWebhookEngine({ databaseUrl, include: (n) => n.slug === NETWORK.slug, pollMs: 200, followerPollMs: 100 });
    delivery = startDelivery({ projectIds: [project.projectId], pollMs: 100 });
  }, 60_000);

  afterAll(async () => {
    await delivery?.stop();
    await engine?.stop();
    await service?.stop();
    await anvil?.stop();
    for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name];
    Object.assign(process.env, savedEnv);
    resetEnv();
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    await disconnectDb();
  });

  it("are on: the SDK is loaded", () => {
    expect(tracingOn()).toBe(true);
    expect(sdkLoaded()).toBe(true);
  });

  it("follow a node call from the caller's traceparent through the gateway to the upstream node, which is sent the trace on", async () => {
    const traceId = hex(16);
    const callerSpan = hex(8);
    const res = await fetch(`${service.url}/node/${NETWORK.slug}/${project.apiKey}`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: `00-${traceId}-${callerSpan}-01` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "eth_getBalance", params: ["0x000000000000000000000000000000000000dEaD", "latest"] }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: 7, result: expect.stringMatching(/^0x/) });

    const server = await waitFor("the gateway's span", () => spansOf(traceId).find((s) => s.kind === KIND.server));
    expect(server).toMatchObject({ name: "POST /node", parentSpanId: callerSpan });
    expect(server.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.response.status_code": 200,
      "blockgate.api": "node",
      "blockgate.network": NETWORK.slug,
      "blockgate.project_id": project.projectId,
      "blockgate.request_id": res.headers.get("x-request-id"),
    });
    expect(server.resource).toMatchObject({ "service.name": "blockgate-traces-test", "blockgate.role": "web", "service.version": expect.any(String) });

    // The call's own request to the node, a child of the gateway's span, and the node was sent its span as the parent.
    const client = await waitFor("the upstream call's span", () => spansOf(traceId).find((s) => s.kind === KIND.client && s.attributes["rpc.method"] === "eth_getBalance"));
    expect(client.parentSpanId).toBe(server.spanId);
    expect(client.attributes).toMatchObject({ "blockgate.network": NETWORK.slug, "blockgate.rpc.methods": ["eth_getBalance"], "http.response.status_code": 200, "server.address": "127.0.0.1" });
    const sent = upstreamRequests.find((r) => r.body.includes('"eth_getBalance"'));
    expect(sent?.headers.traceparent).toBe(`00-${traceId}-${client.spanId}-01`);

    // PostgreSQL queries made for the request (its key's lookup) are in its trace, under the gateway's span.
    const byId = new Map(spansOf(traceId).map((s) => [s.spanId, s]));
    const underServer = (s: Span): boolean => s.parentSpanId === server.spanId || (byId.has(s.parentSpanId) && underServer(byId.get(s.parentSpanId)!));
    const query = await waitFor("a PostgreSQL span in the call's trace", () => spansOf(traceId).find((s) => s.attributes["db.system.name"] === "postgresql" || s.attributes["db.system"] === "postgresql"));
    expect(underServer(query)).toBe(true);

    // Sent as OTLP JSON, and nothing sent names the key the call carried in its path.
    expect([...collected.contentTypes]).toEqual(["application/json"]);
    expect(collected.bodies.join("\n")).not.toContain(project.apiKey);
  });

  it("show a batch's members: a caller's JSON-RPC batch lists its methods, and single calls of callers batched together link to each caller", async () => {
    const traceId = hex(16);
    const res = await fetch(`${service.url}/node/${NETWORK.slug}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": project.apiKey, traceparent: `00-${traceId}-${hex(8)}-01` },
      body: JSON.stringify(["eth_getBalance", "eth_getTransactionCount"].map((method, id) => ({ jsonrpc: "2.0", id, method, params: ["0x000000000000000000000000000000000000dEaD", "latest"] }))),
    });
    expect(res.status).toBe(200);
    const server = await waitFor("the gateway's span", () => spansOf(traceId).find((s) => s.kind === KIND.server));
    const batch = await waitFor("the batch's span", () => spansOf(traceId).find((s) => s.kind === KIND.client && s.attributes["blockgate.rpc.batch_size"] === 2));
    expect(batch.parentSpanId).toBe(server.spanId);
    expect(batch.attributes["blockgate.rpc.methods"]).toEqual(["eth_getBalance", "eth_getTransactionCount"]);

    // The first call goes alone; the two made while it is on its way go together, as one batch.
    const upstream = new EvmUpstream([upstreamUrl], { network: NETWORK.slug, batchMax: 50 });
    const callers: Record<string, { traceId: string; spanId: string }> = {};
    await Promise.all(
      ["first", "second", "third"].map((name) =>
        withSpan(name, {}, (span) => {
          callers[name] = span.spanContext();
          return upstream.call("eth_blockNumber", []);
        }),
      ),
    );
    await upstream.close();
    const together = await waitFor("the callers' batch's span", () => spansOf(callers.second!.traceId).find((s) => s.kind === KIND.client && s.attributes["blockgate.rpc.batch_size"] === 2));
    expect(together.parentSpanId).toBe(callers.second!.spanId);
    expect(together.links).toEqual([expect.objectContaining({ traceId: callers.third!.traceId, spanId: callers.third!.spanId })]);
    expect(spansOf(callers.first!.traceId).find((s) => s.kind === KIND.client)?.attributes["rpc.method"]).toBe("eth_blockNumber");
  });

  it("follow a webhook message from the block that made it to its delivery, the attempt linked to the span that queued it by the message id", async () => {
    const token = hex(16);
    const created = await fetch(`${service.url}/v1/ethereum/traces/webhooks`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": project.apiKey },
      body: JSON.stringify({ eventType: "BLOCK_PERIOD", description: "every block", notification: { webhookUrl: `${receiverUrl}/hooks/${token}` }, isInstant: true, condition: { period: 1 } }),
    });
    expect(created.status).toBe(201);
    const first = await waitFor("a delivery to the receiver", () => delivered[0]);
    const messageId = String(first.headers["webhook-id"]);
    const blockNumber = Number((JSON.parse(first.body) as { event: { message: { block_number: number } } }).event.message.block_number);

    const attempt = await waitFor("the delivery attempt's span", () => collected.spans.find((s) => s.name === "webhook.attempt" && s.attributes["webhook.message_id"] === messageId));
    const enqueued = await waitFor("the span that queued the message", () => collected.spans.find((s) => s.name === "webhook.enqueue" && s.attributes["webhook.message_id"] === messageId));
    expect(enqueued.kind).toBe(KIND.producer);
    expect(enqueued.attributes).toMatchObject({ "webhook.block_number": blockNumber, "blockgate.network": NETWORK.slug, "blockgate.project_id": project.projectId });
    expect(attempt.kind).toBe(KIND.consumer);
    expect(attempt.attributes).toMatchObject({ "webhook.attempt": 1, "webhook.outcome": "success", "http.response.status_code": 200, "server.address": "127.0.0.1" });
    expect(attempt.links).toContainEqual(expect.objectContaining({ traceId: enqueued.traceId, spanId: enqueued.spanId }));
    const stored = await db().webhookMessage.findUniqueOrThrow({ where: { id: messageId }, select: { traceParent: true } });
    expect(stored.traceParent).toBe(`00-${enqueued.traceId}-${enqueued.spanId}-01`);

    // The follower's span for the blocks it took holds the message's span and its block's span.
    const follow = await waitFor("the follower's span", () => spansOf(enqueued.traceId).find((s) => s.spanId === enqueued.parentSpanId));
    expect(follow.name).toBe("webhook.follow");
    expect(follow.attributes).toMatchObject({ "blockgate.network": NETWORK.slug, "webhook.stream": "instant", "webhook.message_count": expect.any(Number) });
    const block = spansOf(enqueued.traceId).find((s) => s.name === "webhook.block" && s.attributes["webhook.block_number"] === blockNumber);
    expect(block).toMatchObject({ parentSpanId: follow.spanId, attributes: expect.objectContaining({ "webhook.message_count": 1 }) });
    expect(spansOf(enqueued.traceId).filter((s) => s.kind === KIND.client && s.parentSpanId === follow.spanId).map((s) => s.attributes["rpc.method"])).toContain("eth_getBlockByNumber");

    // The receiver's URL path (a token here) is never sent.
    expect(collected.bodies.join("\n")).not.toContain(token);
  });
});

describe("started again in one process (a test that starts a second service)", () => {
  it("records again, its queries included", async () => {
    await connectTestDatabase();
    const bodies: string[] = [];
    const collector = await listen(async (_headers, body) => {
      bodies.push(body);
      return { status: 200, body: "{}" };
    });
    try {
      await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: "blockgate-again", ROLE: "all" });
      await withSpan("again", {}, () => rawPool().query("SELECT 'traced again' AS again"));
    } finally {
      await stopTracing();
      await new Promise<void>((resolve) => collector.server.close(() => resolve()));
      await disconnectDb();
    }
    const sent = bodies.join("\n");
    expect(sent).toContain('"name":"again"');
    expect(sent).toContain("traced again");
  });
});
