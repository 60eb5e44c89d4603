// A fourth chain family added through the registry alone: a small stand-in (an in-memory chain
// whose worker adds a block every 100 ms, a mount answering its head, BLOCK_PERIOD webhooks),
// registered with registerFamily and given a network of the catalog, and nothing else edited. The
// real service then runs its worker, the gateway serves its mount and the webhook API on its
// network, the engine follows it and a delivery reaches a receiver on loopback, and the Overview
// lists it.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { disconnectDb } from "@/lib/db/client";
import { resetEnv } from "@/lib/env";
import type { Endpoint, Mount } from "@/lib/gateway/types";
import { clientNetwork, networks, type Network } from "@/lib/networks";
import { startService, type Service } from "@/lib/runtime";
import { addTestNetworks, connectTestDatabase, createTestProject, waitFor } from "@/lib/testing/harness";
import { freePort } from "@/lib/testing/ports";
import { startDelivery, type DeliveryWorker } from "@/lib/webhooks/delivery/worker";
import type { ChainBlockRef, ChainSource } from "@/lib/webhooks/engine/source";
import { endpointEntries, endpointSections } from "./client";
import type { ChainFamily } from "./family";
import { registerFamily } from "./registry";

const FAMILY = "stand-in";
const NETWORK: Network = {
  protocol: "standin",
  network: "testnet",
  slug: "standin-testnet",
  family: FAMILY,
  displayName: "Stand-in Testnet",
  chainId: 7,
  devnetChainId: 7_000_007,
  currency: "STD",
  recordCase: "lower",
  finalityDepth: 0,
  devnetFinalityDepth: 0,
  eventTypes: ["BLOCK_PERIOD"],
  upstreamWebSockets: false,
  upstreamVariable: "UPSTREAM_STANDIN_TESTNET",
  // An upstream, so that its chain counts as reachable without the built-in devnets.
  source: { kind: "upstream", urls: ["http://127.0.0.1:9"] },
  activeChainId: 7,
};

/** The stand-in's chain: its height, grown by its worker while the runtime runs it. */
const chain = { height: 0n, workerStopped: false };
const hashOf = (n: bigint) => `0x${n.toString(16).padStart(64, "0")}`;
const blockRef = (n: bigint): ChainBlockRef => ({ number: n, hash: hashOf(n), parentHash: hashOf(n - 1n), timestamp: 1_700_000_000 + Number(n) });

class StandInSource implements ChainSource {
  readonly finalityDepth = 0;
  readonly reorgs = false;
  constructor(readonly network: Network) {}
  head = async () => (chain.height > 0n ? chain.height : null);
  block = async (n: bigint) => (n >= 1n && n <= chain.height ? blockRef(n) : null);
  blockPeriodMessage = async (b: ChainBlockRef) => ({ height: String(b.number), hash: b.hash });
  matcher = () => ({ match: async () => [], put: () => {}, remove: () => {} });
  sample = async () => ({ height: "1", hash: hashOf(1n) });
}

const head: Endpoint = {
  methods: ["GET"],
  async handle(ctx) {
    ctx.charge(1);
    ctx.meter("head", 1, false);
    return { status: 200, body: { network: ctx.network.slug, height: String(chain.height) } };
  },
};

const mount: Mount = {
  prefix: "standin",
  serves: (n) => n.family === FAMILY,
  match: ([slug, what, ...rest]) => (slug !== undefined && what === "head" && rest.length === 0 ? { network: { slug }, endpoint: head } : undefined),
};

const standIn: ChainFamily = {
  id: FAMILY,
  client: {
    id: FAMILY,
    label: "Stand-in",
    overview: {
      title: "Stand-in chain",
      description: "A family added by a test.",
      endpoints: (n, origin) => [{ label: "Head", url: `${origin}/standin/${n.slug}/head`, copyLabel: `Copy ${n.displayName} head URL` }],
    },
  },
  mounts: [mount],
  // The web role: the service below runs as ROLE=web (see beforeAll).
  workers: (list) =>
    list.map((n) => ({
      role: "web",
      start: () => {
        expect(n.slug).toBe(NETWORK.slug);
        const timer = setInterval(() => chain.height++, 100);
        return {
          stop: async () => {
            clearInterval(timer);
            chain.workerStopped = true;
          },
        };
      },
    })),
  webhooks: { source: (n) => new StandInSource(n), followerRole: () => "web" },
};

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

let service: Service;
let receiver: Server;
let receiverUrl: string;
let delivery: DeliveryWorker;
const received: Received[] = [];
let project: Awaited<ReturnType<typeof createTestProject>>;
const forget: Array<() => void> = [];
const savedEnv = { ...process.env };

beforeAll(async () => {
  await connectTestDatabase();
  forget.push(registerFamily(standIn));
  addTestNetworks(NETWORK);
  project = await createTestProject("Stand-in", "DEVELOPER");
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  // ROLE=web: no delivery worker or retention sweep of this service touches what other suites
  // keep in the shared database; this suite's own delivery worker takes its project's messages.
  Object.assign(process.env, { HOST: "127.0.0.1", PORT: String(await freePort()), ROLE: "web", DEVNETS: "off", WEBHOOK_ALLOW_PRIVATE_URLS: "on", WEBHOOK_FOLLOWER_POLL_MS: "100", DRAIN_MS: "0" });
  resetEnv();
  service = await startService({ withNext: false });
  delivery = startDelivery({ projectIds: [project.projectId], pollMs: 100 });
}, 60_000);

afterAll(async () => {
  await delivery?.stop();
  await service?.stop();
  for (const f of forget) f();
  for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name];
  Object.assign(process.env, savedEnv);
  resetEnv();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  await disconnectDb();
});

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${service.url}${path}`, { method, headers: { "Content-Type": "application/json", "X-API-KEY": project.apiKey }, body: body === undefined ? undefined : JSON.stringify(body) });

describe("a chain family added through the registry alone", () => {
  it("has its worker run by the runtime, and its mount served by the gateway", async () => {
    await waitFor("the stand-in's worker to add blocks", () => (chain.height > 0n ? true : undefined));
    const res = await call("GET", `/standin/${NETWORK.slug}/head`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { network: string; height: string };
    expect(body.network).toBe(NETWORK.slug);
    expect(BigInt(body.height)).toBeGreaterThan(0n);
    // Another family's network is not served on its mount, and its network not on theirs.
    expect((await call("GET", "/standin/ethereum-mainnet/head")).status).toBe(404);
    expect((await call("POST", `/node/${NETWORK.slug}`, { jsonrpc: "2.0", id: 1, method: "eth_chainId" })).status).toBe(404);
  });

  it("has its blocks followed by the webhook engine, and a subscription's messages delivered", async () => {
    const created = await call("POST", "/v1/standin/testnet/webhooks", {
      eventType: "BLOCK_PERIOD",
      description: "every block of the stand-in",
      notification: { webhookUrl: receiverUrl },
      isInstant: true,
      condition: { period: 1 },
    });
    expect(created.status).toBe(201);
    const { subscriptionId } = (await created.json()) as { subscriptionId: string };
    const delivered = await waitFor("a delivery to the receiver", () => received[0]);
    expect(delivered.headers["webhook-id"]).toBeTruthy();
    const payload = JSON.parse(delivered.body) as { subscriptionId: string; protocol: string; network: string; event: { message: { height: string; hash: string } } };
    expect(payload).toMatchObject({ subscriptionId, protocol: "standin", network: "testnet" });
    expect(payload.event.message.hash).toBe(hashOf(BigInt(payload.event.message.height)));
  });

  it("is listed on the Overview with its URLs and the webhook API's", () => {
    const sections = endpointSections(networks().map(clientNetwork));
    const section = sections.find((s) => s.family.id === FAMILY);
    expect(section?.family.overview.title).toBe("Stand-in chain");
    expect(section?.networks.map((n) => n.slug)).toEqual([NETWORK.slug]);
    const entries = endpointEntries(section!.networks[0]!, "https://api.example");
    expect(entries.map((e) => [e.label, e.url])).toEqual([
      ["Head", `https://api.example/standin/${NETWORK.slug}/head`],
      ["Webhooks", "https://api.example/v1/standin/testnet/webhooks"],
    ]);
  });

  it("has its worker stopped with the service", async () => {
    await delivery.stop();
    await service.stop();
    expect(chain.workerStopped).toBe(true);
  });
});
