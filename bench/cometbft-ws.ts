/**
 * `npm run bench -- cometbft-ws [--subscribers 1000] [--blocks 30] [--txs 8]`: fan-out of the native
 * CometBFT WebSocket. The server runs in this process (the real HTTP server, gateway and
 * lib/consensus/cometbft/websocket.ts on a throwaway PostgreSQL); the subscribers run in a child
 * process (bench/cometbft-ws-clients.mjs), each on its own connection subscribed to
 * tm.event='NewBlock'. Blocks are stored one at a time (insertBlocks, as the devnet producer does);
 * the time from the storing transaction's commit to the first and to the last subscriber's event
 * is measured per block, and the server's memory per subscriber from before the connections to
 * after every subscription was answered.
 */
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { createUser } from "@/lib/auth/users";
import { db, disconnectDb } from "@/lib/db/client";
import { SOCKET_LIMITS } from "@/lib/consensus/cometbft/websocket";
import { generateBlocks } from "@/lib/consensus/devnet/producer";
import { networkBySlug } from "@/lib/networks";
import { createProject } from "@/lib/projects/service";
import { startHttpServer } from "@/lib/server";
import { UsageMeter } from "@/lib/usage/meter";
import { cleanup } from "./cleanup";
import { throwawayDatabase } from "./database";
import { spawnNode } from "./processes";
import { machineInfo } from "./resources";
import { codeVersion, fmt, markdownTable, prependResultsSection } from "./results";

function option(argv: string[], name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  const v = i === -1 ? undefined : Number(argv[i + 1]);
  return v !== undefined && Number.isFinite(v) && v > 0 ? v : fallback;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

function heapNow(): { heap: number; rss: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
}

export async function cometbftWsBench(argv: string[]): Promise<number> {
  if (argv.includes("--help")) {
    console.log("npm run bench -- cometbft-ws [--subscribers 1000] [--blocks 30] [--txs 8] [--no-record]");
    return 0;
  }
  const subscribers = option(argv, "subscribers", 1000);
  const blocks = option(argv, "blocks", 30);
  const txs = option(argv, "txs", 8);
  await throwawayDatabase("cometbft-ws-");
  const network = networkBySlug("babylon-testnet")!;
  const user = await createUser({ email: `bench-${Date.now()}@example.com`, password: "correct horse battery" });
  const { projectId, apiKey } = await createProject(user.id, "Subscribers");
  await db().project.update({ where: { id: projectId }, data: { plan: "ENTERPRISE" } });
  SOCKET_LIMITS.connectionsPerKey = subscribers;
  SOCKET_LIMITS.subscriptionsPerKey = subscribers;
  await generateBlocks(network, 5, txs);

  const meter = new UsageMeter();
  const server = await startHttpServer({ host: "127.0.0.1", port: 0, meter });
  cleanup.add("stop the server", () => server.close());
  await sleep(500);
  const before = heapNow();

  console.error(`[bench] opening ${subscribers} subscriptions…`);
  const clients = spawnNode("subscribers", [path.join("bench", "cometbft-ws-clients.mjs"), `${server.url.replace(/^http/, "ws")}/cometbft/${network.slug}/${apiKey}/websocket`, String(subscribers)], { env: process.env, echo: false });
  const lines = createInterface({ input: clients.child.stdout! });
  const received = new Map<string, { first: number; last: number }>();
  let ready = false;
  lines.on("line", (line) => {
    if (line === "ready") ready = true;
    else if (line.startsWith("{")) {
      const r = JSON.parse(line) as { height: string; first: number; last: number };
      received.set(r.height, r);
    }
  });
  for (let waited = 0; !ready; waited += 100) {
    if (clients.exited() || waited > 120_000) throw new Error(`the subscribers did not get ready:\n${clients.output()}`);
    await sleep(100);
  }
  await sleep(500);
  const after = heapNow();

  console.error(`[bench] storing ${blocks} blocks of ${txs} txs…`);
  const stored = new Map<string, number>();
  const first = (await db().consensusBlock.findFirst({ where: { network: network.slug }, orderBy: { height: "desc" }, select: { height: true } }))!.height;
  for (let i = 1; i <= blocks; i++) {
    await generateBlocks(network, 1, txs);
    stored.set(String(first + BigInt(i)), performance.timeOrigin + performance.now());
    await sleep(300);
  }
  for (let waited = 0; received.size < blocks && waited < 30_000; waited += 100) await sleep(100);
  await clients.stop(2000);
  await server.close();
  await meter.stop();
  await disconnectDb();

  const toFirst: number[] = [];
  const toLast: number[] = [];
  for (const [height, at] of stored) {
    const r = received.get(height);
    if (!r) continue;
    toFirst.push(r.first - at);
    toLast.push(r.last - at);
  }
  toFirst.sort((a, b) => a - b);
  toLast.sort((a, b) => a - b);
  const rows = [
    ["block stored → first subscriber's event", fmt.ms(percentile(toFirst, 50)), fmt.ms(percentile(toFirst, 99)), fmt.ms(toFirst.at(-1) ?? NaN)],
    [`block stored → last (${subscribers}th) subscriber's event`, fmt.ms(percentile(toLast, 50)), fmt.ms(percentile(toLast, 99)), fmt.ms(toLast.at(-1) ?? NaN)],
  ];
  const perSub = (a: number, b: number) => `${((b - a) / subscribers / 1024).toFixed(1)} KiB`;
  const table = markdownTable(["measure", "p50 ms", "p99 ms", "max ms"], rows);
  const memory = markdownTable(
    ["server memory", "before", `with ${subscribers} subscribers`, "per subscriber"],
    [
      ["JS heap used (after GC)", fmt.mib(before.heap / 2 ** 20), fmt.mib(after.heap / 2 ** 20), perSub(before.heap, after.heap)],
      ["RSS", fmt.mib(before.rss / 2 ** 20), fmt.mib(after.rss / 2 ** 20), perSub(before.rss, after.rss)],
    ],
  );
  const section = [
    `## cometbft-ws — ${new Date().toISOString()}`,
    "",
    `Machine: ${machineInfo()}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(" / ")} at the end (other work shares the cores). Code: ${codeVersion(["lib/consensus/cometbft", "lib/consensus/store.ts", "lib/gateway"])}.`,
    "",
    `Run: \`npm run bench -- cometbft-ws --subscribers ${subscribers} --blocks ${blocks} --txs ${txs}\`: ${subscribers} WebSocket connections (one child process) each subscribed to tm.event='NewBlock' on /cometbft/${network.slug}; ${blocks} blocks of ${txs} txs stored one at a time 300 ms apart on a throwaway embedded PostgreSQL; ${received.size} of them reached every subscriber. Times from the storing transaction's commit (insertBlocks resolved) to the event's arrival in the subscribers' process; the server (this process), PostgreSQL and the subscribers share the machine's cores.${(globalThis as { gc?: unknown }).gc ? "" : " (Run without --expose-gc: heap figures include garbage.)"}`,
    "",
    table,
    "",
    memory,
  ].join("\n");
  console.log(`\n${section}\n`);
  if (!argv.includes("--no-record")) await prependResultsSection(section);
  return received.size === blocks ? 0 : 1;
}
