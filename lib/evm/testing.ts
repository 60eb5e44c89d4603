// Helpers for EVM integration tests: bare anvil processes (stand-ins for upstream nodes) and the
// devnet supervisor with its traffic generator, wired into the node endpoint's backends.
import { captureLogs } from "@/lib/testing/logs";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { networkBySlug } from "@/lib/networks";
import { DEFAULT_UPSTREAM_BATCH_MAX } from "@/lib/env";
import { freeLowPort } from "@/lib/testing/ports";
import { services } from "@/lib/services";
import { AnvilSupervisor, anvilBinary } from "./devnet/anvil";
import { startTrafficGenerator, type TrafficGenerator } from "./devnet/traffic";

/** Every anvil spawned here, killed when the test process exits whatever happened. */
const spawned = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of spawned) child.kill("SIGKILL");
});

/** One JSON-RPC call straight to a node (no gateway); returns the whole response object. */
export async function rpcDirect(url: string, method: string, params: unknown[] = []): Promise<{ id: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  return (await res.json()) as { id: unknown; result?: unknown; error?: { code: number; message: string } };
}

export interface BareAnvil {
  url: string;
  port: number;
  child: ChildProcess;
  /** SIGTERM by default; SIGKILL to simulate a crash. Resolves once the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** An anvil on loopback and a free port, ready to answer when this resolves. */
export async function spawnAnvil(opts: { chainId: number; blockTimeSec?: number }): Promise<BareAnvil> {
  const port = await freeLowPort();
  const args = ["--host", "127.0.0.1", "--port", String(port), "--chain-id", String(opts.chainId), "--silent"];
  if (opts.blockTimeSec) args.push("--block-time", String(opts.blockTimeSec));
  const child = spawn(anvilBinary(), args, { stdio: ["ignore", "ignore", "pipe"] });
  spawned.add(child);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => spawned.delete(child));
  const url = `http://127.0.0.1:${port}`;
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  for (const until = Date.now() + 30_000; ; ) {
    if (child.exitCode !== null) throw new Error(`anvil exited during start-up: ${stderr.trim() || `code ${child.exitCode}`}`);
    try {
      const r = await rpcDirect(url, "eth_chainId");
      if (r.result === `0x${opts.chainId.toString(16)}`) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > until) {
      await stop("SIGKILL");
      throw new Error("anvil did not answer within 30 s");
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, port, child, stop };
}

export interface UpstreamLogLine {
  network?: string;
  level: string;
  msg: string;
}

export interface TestDevnets {
  supervisor: AnvilSupervisor;
  /** The devnet's own URL (anvil, not the gateway), starting it when needed. */
  nodeUrl(slug: string): Promise<string>;
  /** The traffic generator of a devnet once its contracts are deployed and funded. */
  traffic(slug: string): Promise<TrafficGenerator>;
  /** Lines the supervisor and the traffic generators logged. */
  logs: string[];
  /** What the upstream pools logged (their network, level and message). */
  upstreamLogs: UpstreamLogLine[];
  /** Stops the traffic generators and every anvil, and removes the devnets' state. */
  stop(): Promise<void>;
}

/**
 * An AnvilSupervisor (short block time, state in a temporary directory) registered as the node
 * endpoint's backend, starting the traffic generator on each devnet it starts, as the launcher does.
 */
export async function startTestDevnets(opts: { blockTimeSec?: number; trafficIntervalMs?: number; batchMax?: number } = {}): Promise<TestDevnets> {
  const blockTimeSec = opts.blockTimeSec ?? 1;
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "blockgate-test-anvil-"));
  const { logger: devnetLogger, messages: logs } = captureLogs();
  const generators = new Map<string, Promise<TrafficGenerator>>();
  const supervisor = new AnvilSupervisor({
    dataDir,
    blockTimeSec,
    idleMs: 10 * 60_000,
    logger: devnetLogger,
    onStarted: ({ network, url }) => {
      const generator = startTrafficGenerator({ rpcUrl: url, network: network.slug, intervalMs: opts.trafficIntervalMs ?? 500, logger: devnetLogger });
      generator.catch(() => undefined); // reported by traffic()
      generators.set(network.slug, generator);
      return Promise.resolve(async () => {
        await (await generator.catch(() => undefined))?.stop();
      });
    },
  });
  const upstreamLogs: UpstreamLogLine[] = [];
  const logger = pino({ base: undefined, timestamp: false, formatters: { level: (label) => ({ level: label }) } }, { write: (line: string) => void upstreamLogs.push(JSON.parse(line) as UpstreamLogLine) });
  // Single calls are batched upstream as the launcher does by default (UPSTREAM_BATCH_MAX).
  services().evm.configure({ devnets: supervisor, blockTimeMs: blockTimeSec * 1000, batchMax: opts.batchMax ?? DEFAULT_UPSTREAM_BATCH_MAX, logger });
  const network = (slug: string) => {
    const n = networkBySlug(slug);
    if (!n) throw new Error(`no network ${slug}`);
    return n;
  };
  return {
    supervisor,
    logs,
    upstreamLogs,
    nodeUrl: (slug) => supervisor.url(network(slug)),
    async traffic(slug) {
      await supervisor.url(network(slug));
      const generator = generators.get(slug);
      if (!generator) throw new Error(`no traffic generator for ${slug}`);
      return generator;
    },
    async stop() {
      await supervisor.stopAll();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface RecordingProxy {
  url: string;
  /** Methods of every JSON-RPC request that reached the target, in order (batch items each). */
  methods: string[];
  /** The request bodies, in order. */
  bodies: string[];
  close(): Promise<void>;
}

/**
 * A JSON-RPC pass-through to `target` that records what it forwards: to see what the gateway sends
 * a node. `rewrite` changes the node's answer on its way back (to play a node that writes its
 * answers otherwise, or refuses batches).
 */
export async function startRecordingProxy(target: string, opts: { rewrite?: (request: string, answer: string) => string } = {}): Promise<RecordingProxy> {
  const methods: string[] = [];
  const bodies: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      bodies.push(body);
      try {
        const parsed = JSON.parse(body) as { method?: string } | Array<{ method?: string }>;
        for (const item of Array.isArray(parsed) ? parsed : [parsed]) methods.push(String(item.method));
      } catch {
        methods.push("(not JSON)");
      }
      fetch(target, { method: "POST", headers: { "Content-Type": "application/json" }, body })
        .then(async (r) => {
          const text = await r.text();
          response.writeHead(r.status, { "Content-Type": "application/json" }).end(opts.rewrite ? opts.rewrite(body, text) : text);
        })
        .catch(() => response.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    methods,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // the gateway keeps connections alive
      }),
  };
}
