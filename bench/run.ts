/**
 * `npm run bench -- <name> [options]`: runs one named benchmark, prints its results and records
 * them in bench/RESULTS.md. Each benchmark is a module exporting `(argv) => Promise<exit code>`,
 * loaded only when asked for. Shared pieces: cleanup.ts (undo steps on failure and Ctrl-C),
 * processes.ts (child processes), load.ts (autocannon runs), resources.ts (machine, CPU and
 * memory from /proc), cpu-profile.ts, results.ts (RESULTS.md), database.ts (a throwaway
 * PostgreSQL and secrets) and options.ts (whole-number options).
 */
import { runWithCleanup } from "./cleanup";

export type Benchmark = (argv: string[]) => Promise<number>;

const BENCHMARKS: Record<string, { summary: string; load: () => Promise<Benchmark> }> = {
  gateway: {
    summary: "public API gateway (POST /node/<network> eth_chainId) vs a bare node:http server, c=1 and c=32",
    load: async () => (await import("./gateway")).gatewayBench,
  },
  consensus: {
    summary: "consensus index: bulk ingestion tx/s (100k blocks × 10 txs) and tx_search/block_search p50/p99 via the real server",
    load: async () => (await import("./consensus")).consensusBench,
  },
  "query-plan": {
    summary: "consensus searches: planning and execution time of 1, 5 and 10 conditions, PostgreSQL's default planner settings vs the public pool's",
    load: async () => (await import("./query-plan")).queryPlanBench,
  },
  usage: {
    summary: "usage accounting: gateway req/s at c=32 with metering, limits and the request log on vs off, database writes/s at 100 and 5,000 req/s, chart queries over 90 days of a busy project (--only charts|load)",
    load: async () => (await import("./usage")).usageBench,
  },
  "webhook-delivery": {
    summary: "webhook delivery workers: deliveries/s to a local receiver vs bare undici POSTs to it",
    load: async () => (await import("./webhook-delivery")).webhookDeliveryBench,
  },
  node: {
    summary: "EVM node path: eth_blockNumber / eth_getBlockByNumber to anvil direct vs bare proxy vs gateway, c=1 and c=32",
    load: async () => (await import("./node")).nodeBench,
  },
  "cometbft-ws": {
    summary: "native CometBFT WebSocket fan-out: 1,000 NewBlock subscribers, block stored → first/last event p50/p99, server memory per subscriber",
    load: async () => (await import("./cometbft-ws")).cometbftWsBench,
  },
  webhooks: {
    summary: "webhooks end to end on one anvil devnet: 10,000 LOG subscriptions, block mined → delivered p50/p99, deliveries/s vs bare POSTs, matching time",
    load: async () => (await import("./webhooks")).webhooksBench,
  },
  cluster: {
    summary: "cluster: gateway CPU/request and p50 with limits shared through Redis vs one process alone; deliveries/s with 1 vs 2 worker processes (--only limiter|delivery)",
    load: async () => (await import("./cluster")).clusterBench,
  },
  retention: {
    summary: "database size over a devnet run compressed in time (default 24 h): consensus and Aptos devnet tables with the retention worker's passes vs without",
    load: async () => (await import("./retention")).retentionBench,
  },
  "webhook-matching": {
    summary: "webhook LOG matching time per block (500 logs) at 1, 100 and 10,000 subscriptions, in process",
    load: async () => (await import("./webhook-matching")).webhookMatchingBench,
  },
};

function list(): string {
  const width = Math.max(...Object.keys(BENCHMARKS).map((n) => n.length));
  const lines = Object.entries(BENCHMARKS).map(([name, b]) => `  ${name.padEnd(width)}  ${b.summary}`);
  return `Usage: npm run bench -- <name> [options]   (options: npm run bench -- <name> --help)\n\nBenchmarks:\n${lines.join("\n")}`;
}

const [name, ...rest] = process.argv.slice(2);
const entry = name !== undefined && Object.hasOwn(BENCHMARKS, name) ? BENCHMARKS[name] : undefined;
if (!entry) {
  if (name !== undefined && name !== "--help" && name !== "-h") console.error(`Unknown benchmark "${name}".\n`);
  console.error(list());
  process.exit(name === "--help" || name === "-h" ? 0 : 1);
}

void entry.load().then(
  (bench) => runWithCleanup(() => bench(rest)),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
