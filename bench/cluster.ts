/**
 * `npm run bench -- cluster`: what running as a cluster costs (`--only limiter` or `--only delivery`
 * runs one part).
 *
 * Limiter: one server process (bench/cluster-server.ts) serves the public API twice from one heap:
 *   (s) on PORT as `npm start -- --api-only` runs it with REDIS_URL: plan limits shared through a
 *       real redis-server (every CU/s bucket and allowance reported in the background);
 *   (l) on LOCAL_PORT with limits this process holds alone, as a single process without Redis.
 * The load is eth_chainId (5 CU, answered by the gateway itself) over the keys of BUSINESS projects
 * (3,000 CU/s each), enough of them that no key reaches its rate: every call passes both limits.
 * Turns load (s) then (l) (the reverse every other turn); the figures are medians over the turns.
 * Targets (issue 25): server CPU per request (s)/(l) ≤ 1.10 at c=32; p50 added by (s) at c=1 < 0.2 ms.
 *
 * Subscriptions: what a network's active subscriptions cost its webhook follower
 * (lib/webhooks/engine/follower.ts): the read of all of them at its start, the read it runs at every
 * head move (at least once a second) when nothing changed, the start block update of every poll,
 * the engine's look for networks to follow, a change and a deletion read and applied, and the
 * memory of its matchers.
 *
 * Delivery: deliveries/s of one and of two delivery worker processes (bench/delivery-worker.ts:
 * what ROLE=worker runs for deliveries) emptying the same queue of due messages to local receivers
 * (bench/baseline-server.mjs, one process each, every receiver its own host:port), with the CPU
 * each delivery costs the workers and PostgreSQL: the per-delivery costs of the capacity model.
 */
import { readFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import os from "node:os";
import { parseArgs } from "node:util";
import { createUser } from "@/lib/auth/users";
import { db, disconnectDb, rawPool } from "@/lib/db/client";
import { Plan } from "@/lib/db/generated/enums";
import { EvmChainSource } from "@/lib/evm/webhooks";
import { networkBySlug } from "@/lib/networks";
import { createProject } from "@/lib/projects/service";
import { freePort } from "@/lib/testing/ports";
import { startRedis } from "@/lib/testing/redis";
import { assignStartBlocks, networkFollower, networksWithSubscriptions, refreshSubscriptions } from "@/lib/webhooks/engine/follower";
import { createWebhook } from "@/lib/webhooks/service";
import { cleanup, tempDir } from "./cleanup";
import { runLoad, type LoadResult } from "./load";
import { wholeNumberOption } from "./options";
import { processAndDescendants, spawnNode, waitUntilReady, workerPid, type Service } from "./processes";
import { machineInfo, startCpuAccounting, waitForQuiet, type CpuUsage } from "./resources";
import { codeVersion, fmt, markdownTable, prependResultsSection } from "./results";
import { benchSubscriptions, enqueueLogs, startReceiver, webhookBenchDatabase } from "./webhook-delivery";

/** Other processes on the machine using less than this many cores count as quiet. */
const QUIET_CORES = 0.2;

const USAGE = `Usage: npm run bench -- cluster [options]
  --only P            run one part: limiter, delivery or subscriptions (default: all three)
  --dry-run           print the results without writing bench/RESULTS.md
  --verbose           echo the servers' output
  --max-wait S        before each run, wait up to S seconds (default 30; 0: don't) for other
                      processes on the machine to use less than ${QUIET_CORES} of a core
Limiter:
  --turns N           turns of (s) and (l) per concurrency (default 4)
  --duration S        measured seconds per run (default 8)
  --projects K        BUSINESS projects whose keys the load rotates over (default 40)
Delivery:
  --messages N        messages per run (default 20000)
  --receivers R       receiver processes (default 4)
Subscriptions:
  --subscriptions N   active LOG subscriptions on one network (default 1000000)`;

const PARTS = ["limiter", "delivery", "subscriptions"];
const TARGET_CPU_RATIO = 1.1;
const TARGET_ADDED_P50_MS = 0.2;
const NETWORK = "ethereum-mainnet";
const RPC_BODY = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
const log = (msg: string) => console.error(`[bench] ${msg}`);

function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      only: { type: "string" },
      turns: { type: "string" },
      duration: { type: "string" },
      projects: { type: "string" },
      messages: { type: "string" },
      receivers: { type: "string" },
      subscriptions: { type: "string" },
      "dry-run": { type: "boolean" },
      verbose: { type: "boolean" },
      "max-wait": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) return undefined;
  if (values.only !== undefined && !PARTS.includes(values.only)) throw new Error(`--only must be one of ${PARTS.join(", ")}, got "${values.only}"\n${USAGE}`);
  const int = wholeNumberOption(USAGE);
  return {
    only: values.only,
    turns: int(values.turns, 4, "turns", { min: 1, max: 50 }),
    durationSec: int(values.duration, 8, "duration", { min: 1, unit: "seconds" }),
    projects: int(values.projects, 40, "projects", { min: 1, max: 1000 }),
    messages: int(values.messages, 20_000, "messages", { min: 100, max: 1_000_000 }),
    receivers: int(values.receivers, 4, "receivers", { min: 1, max: 32 }),
    subscriptions: int(values.subscriptions, 1_000_000, "subscriptions", { min: 1000, max: 10_000_000 }),
    dryRun: values["dry-run"] ?? false,
    verbose: values.verbose ?? false,
    maxWaitSec: int(values["max-wait"], 30, "max-wait", { min: 0, unit: "seconds" }),
  };
}
type Options = NonNullable<ReturnType<typeof parseOptions>>;

interface Part {
  title: string;
  text: string;
  verdicts: Array<{ target: string; measured: string; pass: boolean | undefined }>;
  failed: boolean;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** CPU µs a group of processes spent per unit of work. */
const usPer = (cpu: CpuUsage | undefined, group: string, units: number) => (cpu && units > 0 ? ((cpu.groups[group] ?? NaN) * cpu.wallSec * 1e6) / units : NaN);

/** The PostgreSQL processes this bench started (the throwaway database's server and backends). */
function postgresPids(): number[] {
  return processAndDescendants(process.pid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "postgres";
    } catch {
      return false;
    }
  });
}

export async function clusterBench(argv: string[]): Promise<number> {
  const opts = parseOptions(argv);
  if (!opts) {
    console.error(USAGE);
    return 0;
  }
  const started = new Date();
  await webhookBenchDatabase("bench-cluster-");
  const parts: Part[] = [];
  if (opts.only === undefined || opts.only === "limiter") parts.push(await measureLimiter(opts));
  if (opts.only === undefined || opts.only === "delivery") parts.push(await measureDelivery(opts));
  if (opts.only === undefined || opts.only === "subscriptions") parts.push(await measureSubscriptions(opts));
  await disconnectDb();
  const verdict = markdownTable(
    ["target", "measured", "verdict"],
    parts.flatMap((p) => p.verdicts.map((v) => [v.target, v.measured, v.pass === undefined ? "—" : v.pass ? "PASS" : "FAIL"])),
  );
  const section = [
    `## cluster — ${started.toISOString()}`,
    "",
    `- Command: \`npm run bench -- ${["cluster", ...argv].join(" ")}\`.`,
    `- Code: ${codeVersion(["lib/limits", "lib/gateway", "lib/server.ts", "lib/webhooks/delivery"])}.`,
    `- Machine: ${machineInfo()}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(" / ")} at the end.`,
    "",
    ...parts.flatMap((p) => [`### ${p.title}`, "", p.text, ""]),
    "### Targets",
    "",
    verdict,
    "",
  ].join("\n");
  console.log(section);
  if (!opts.dryRun) await prependResultsSection(section);
  return parts.every((p) => !p.failed && p.verdicts.every((v) => v.pass !== false)) ? 0 : 1;
}

type Mode = "s" | "l";
interface Run {
  mode: Mode;
  connections: number;
  result: LoadResult;
  cpu: CpuUsage | undefined;
}

async function measureLimiter(opts: Options): Promise<Part> {
  const redis = await startRedis();
  const unregisterRedis = cleanup.add("stop redis-server", () => redis.stop());
  log(`creating ${opts.projects} BUSINESS projects…`);
  const keys: string[] = [];
  for (let i = 0; i < opts.projects; i++) {
    const user = await createUser({ email: `bench-cluster-${Date.now()}-${i}@example.com`, password: "correct horse battery" });
    const { projectId, apiKey } = await createProject(user.id, `Cluster bench ${i}`);
    await db().project.update({ where: { id: projectId }, data: { plan: Plan.BUSINESS } });
    keys.push(apiKey);
  }
  const work = await tempDir("bench-cluster-");
  const [port, localPort] = [await freePort(), await freePort()];
  const server: Service = spawnNode("cluster server", ["bench/cluster-server.mjs"], {
    echo: opts.verbose,
    env: { ...process.env, PORT: String(port), LOCAL_PORT: String(localPort), HOST: "127.0.0.1", NODE_ENV: "production", REDIS_URL: redis.url, DATA_DIR: `${work}/data`, DEVNETS: "off", LOG_LEVEL: "warn" },
  });
  const url = (mode: Mode) => `http://127.0.0.1:${mode === "s" ? port : localPort}/node/${NETWORK}`;
  const headers = { "Content-Type": "application/json" };
  const probe = async (mode: Mode) => (await fetch(url(mode), { method: "POST", headers: { ...headers, "X-API-KEY": keys[0]! }, body: RPC_BODY })).status === 200;
  await waitUntilReady(server, async () => (await probe("s")) && (await probe("l")));
  const ready = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json().catch(() => ({}))) as { limits?: string };
  if (ready.limits !== "shared") throw new Error(`(s) reports limits ${ready.limits}, not shared: is redis-server answering at ${redis.url}?`);
  const serverPids = [...new Set([server.pid, workerPid(server.pid)])];
  const rotateHeaders = keys.map((k) => ({ "X-API-KEY": k }));

  const runs: Run[] = [];
  for (const connections of [32, 1]) {
    for (let turn = 0; turn < opts.turns; turn++) {
      const order: Mode[] = turn % 2 === 0 ? ["s", "l"] : ["l", "s"];
      for (const mode of order) {
        if (opts.maxWaitSec > 0) await waitForQuiet(QUIET_CORES, opts.maxWaitSec);
        await runLoad({ url: url(mode), method: "POST", headers, rotateHeaders, body: RPC_BODY, connections, durationSec: 2 });
        const stop = startCpuAccounting({ server: () => serverPids, redis: () => [redis.pid], postgres: postgresPids });
        const result = await runLoad({ url: url(mode), method: "POST", headers, rotateHeaders, body: RPC_BODY, connections, durationSec: opts.durationSec });
        const cpu = stop();
        runs.push({ mode, connections, result, cpu });
        log(`(${mode}) c=${connections} turn ${turn + 1}: ${fmt.rps(result.rps)} req/s, p50 ${fmt.ms(result.latency.p50)} ms, server ${fmt.ms(usPer(cpu, "server", result.requests))} µs/req, redis ${fmt.ms(usPer(cpu, "redis", result.requests))} µs/req, non-2xx ${result.non2xx}`);
      }
    }
  }
  const refusedBySharedLimits = runs.reduce((n, r) => n + r.result.non2xx + r.result.errors, 0);
  await server.stop();
  unregisterRedis();
  await redis.stop();

  const pairs = (connections: number) => {
    const of = (mode: Mode) => runs.filter((r) => r.connections === connections && r.mode === mode);
    return of("s").map((s, i) => [s, of("l")[i]!] as const);
  };
  const cpuRatio = median(pairs(32).map(([s, l]) => usPer(s.cpu, "server", s.result.requests) / usPer(l.cpu, "server", l.result.requests)));
  const addedP50 = median(pairs(1).map(([s, l]) => s.result.latency.p50 - l.result.latency.p50));
  const row = (mode: Mode, connections: number) => {
    const rs = runs.filter((r) => r.mode === mode && r.connections === connections);
    const m = (f: (r: Run) => number) => median(rs.map(f));
    return [
      mode === "s" ? "(s) shared through Redis" : "(l) one process alone",
      String(connections),
      fmt.rps(m((r) => r.result.rps)),
      fmt.ms(m((r) => r.result.latency.p50)),
      fmt.ms(m((r) => r.result.latency.p99)),
      m((r) => usPer(r.cpu, "server", r.result.requests)).toFixed(1),
      m((r) => usPer(r.cpu, "redis", r.result.requests)).toFixed(2),
      m((r) => usPer(r.cpu, "postgres", r.result.requests)).toFixed(2),
    ];
  };
  const table = markdownTable(
    ["limits", "c", "req/s", "p50 ms", "p99 ms", "server CPU µs/req", "redis CPU µs/req", "PostgreSQL CPU µs/req"],
    [row("s", 32), row("l", 32), row("s", 1), row("l", 1)],
  );
  return {
    title: "Limiter: shared through Redis vs one process alone",
    text: [
      `One server process (bench/cluster-server.ts), NODE_ENV=production, DEVNETS=off, a throwaway PostgreSQL and a real redis-server on this machine; eth_chainId (5 CU, answered by the gateway) rotating over ${opts.projects} BUSINESS keys (3,000 CU/s each), so every call passes both the CU/s limit and the allowance and is metered. ${opts.turns} turns per concurrency, ${opts.durationSec} s measured after a 2 s warm-up, (s) and (l) alternating; medians over the turns. CPU from /proc: the server process, redis-server, and PostgreSQL (usage flushes). Requests refused or failed over all runs: ${refusedBySharedLimits}.`,
      "",
      table,
    ].join("\n"),
    verdicts: [
      { target: `server CPU per request (s)/(l) at c=32 ≤ ${TARGET_CPU_RATIO}`, measured: fmt.ratio(cpuRatio), pass: cpuRatio <= TARGET_CPU_RATIO },
      { target: `p50 added by (s) at c=1 < ${TARGET_ADDED_P50_MS} ms`, measured: `${fmt.ms(addedP50)} ms`, pass: addedP50 < TARGET_ADDED_P50_MS },
    ],
    failed: refusedBySharedLimits > 0,
  };
}

async function measureDelivery(opts: Options): Promise<Part> {
  const receivers = await Promise.all(Array.from({ length: opts.receivers }, () => startReceiver(0)));
  const rows: string[][] = [];
  const perSec: Record<number, number> = {};
  let failed = false;
  for (const workers of [1, 2]) {
    const projects: string[] = [];
    const subs: string[] = [];
    for (const [i, r] of receivers.entries()) {
      const made = await benchSubscriptions(`Cluster delivery bench ${workers}/${i}`, r.url, 25);
      projects.push(made.projectId);
      subs.push(...made.subs);
    }
    log(`${workers} worker(s): ${opts.messages} messages over ${subs.length} subscriptions on ${receivers.length} receivers…`);
    await enqueueLogs(subs, opts.messages);
    await db().$executeRawUnsafe("ANALYZE webhook_messages");
    if (opts.maxWaitSec > 0) await waitForQuiet(QUIET_CORES, opts.maxWaitSec);
    const procs = Array.from({ length: workers }, (_, i) =>
      spawnNode(`delivery worker ${i + 1}`, ["bench/delivery-worker.mjs"], { echo: opts.verbose, env: { ...process.env, BENCH_PROJECT_IDS: projects.join(","), LOG_LEVEL: "warn" } }),
    );
    // Started (compiled, connected, listening) before the clock starts: they find the queue at once.
    await Promise.all(procs.map((p) => waitUntilReady(p, async () => p.output().includes("delivering"))));
    const pids = () => procs.flatMap((p) => [...new Set([p.pid, workerPid(p.pid)])]);
    const stop = startCpuAccounting({ workers: pids, postgres: postgresPids });
    const t0 = performance.now();
    // Counted with node-postgres: each check is one cheap indexed count.
    const pending = async () => Number((await rawPool().query<{ n: string }>("SELECT count(*) AS n FROM webhook_messages WHERE project_id = ANY($1) AND status = 'PENDING'", [projects])).rows[0]!.n);
    while ((await pending()) > 0) await new Promise((r) => setTimeout(r, 100));
    const seconds = (performance.now() - t0) / 1000;
    const cpu = stop();
    await Promise.all(procs.map((p) => p.stop()));
    const bad = await db().webhookMessage.count({ where: { projectId: { in: projects }, status: { not: "SUCCESS" } } });
    const doubled = Number((await rawPool().query<{ n: string }>("SELECT count(*) - count(DISTINCT message_id) AS n FROM webhook_attempts WHERE project_id = ANY($1)", [projects])).rows[0]!.n);
    failed ||= bad > 0 || doubled > 0;
    perSec[workers] = opts.messages / seconds;
    rows.push([String(workers), opts.messages.toLocaleString("en-US"), fmt.rps(perSec[workers]), usPer(cpu, "workers", opts.messages).toFixed(0), usPer(cpu, "postgres", opts.messages).toFixed(0), fmt.cores(cpu?.groups.workers), fmt.cores(cpu?.groups.postgres), String(bad), String(doubled)]);
  }
  await Promise.all(receivers.map((r) => r.stop()));
  const table = markdownTable(["worker processes", "messages", "deliveries/s", "workers CPU µs/delivery", "PostgreSQL CPU µs/delivery", "workers cores", "PostgreSQL cores", "not delivered", "sent twice"], rows);
  const scaling = perSec[2]! / perSec[1]!;
  return {
    title: "Delivery: one vs two worker processes",
    text: [
      `Delivery worker processes (bench/delivery-worker.ts: lib/webhooks/delivery/worker.ts with the configured bounds, WEBHOOK_DELIVERY_PER_HOST per receiver host for the whole cluster) emptying a queue of due LOG messages over 25 subscriptions per receiver, ${receivers.length} receivers (bench/baseline-server.mjs, one process each, answering 200 at once), clock from the workers' start until no message is PENDING. Everything (PostgreSQL, receivers, workers, bench) shares this machine's ${os.cpus().length} cores, so two workers compete with PostgreSQL for the same cores: the scaling measured is this machine's, not the design's (claims are SKIP LOCKED; nothing serializes workers but the per-host bound).`,
      "",
      table,
    ].join("\n"),
    verdicts: [{ target: "deliveries/s with 2 workers / with 1", measured: fmt.ratio(scaling), pass: undefined }],
    failed,
  };
}

/** The heap in use after a full collection (V8's gc, exposed at run time). */
function heapAfterGc(): number {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
  return process.memoryUsage().heapUsed;
}

async function measureSubscriptions(opts: Options): Promise<Part> {
  const n = opts.subscriptions;
  const network = networkBySlug("ethereum-mainnet")!;
  // The network's follower is to hold this part's subscriptions alone (the delivery part's are done with).
  await rawPool().query("DELETE FROM webhook_subscriptions WHERE network = $1", [network.slug]);
  const user = await createUser({ email: `bench-cluster-subs-${Date.now()}@example.com`, password: "correct horse battery" });
  const { projectId } = await createProject(user.id, "Cluster subscriptions bench");
  const template = await createWebhook(projectId, network, { eventType: "LOG", description: "template", notification: { webhookUrl: "http://127.0.0.1:9/hooks" }, condition: { address: `0x${"11".repeat(20)}`, topics: [`0x${"22".repeat(32)}`] } });
  log(`inserting ${n.toLocaleString("en-US")} active LOG subscriptions (one contract and topic each, as a follower sees them)…`);
  const t0 = performance.now();
  // Copies of a subscription made through the service, each on its own contract address.
  await rawPool().query(
    `INSERT INTO webhook_subscriptions (id, project_id, network, event_type, description, webhook_url, is_instant, is_active, condition, log_address, log_topic0, period, start_block, signing_key, sequence, created_at, updated_at)
     SELECT 'wh_bench' || g, s.project_id, s.network, s.event_type, s.description, s.webhook_url, s.is_instant, true,
            jsonb_set(s.condition::jsonb, '{address}', to_jsonb(a.addr)), a.addr, s.log_topic0, s.period, 1, s.signing_key, 0, now(), now()
     FROM webhook_subscriptions s, generate_series(1, $2::int) g, LATERAL (SELECT '0x' || lpad(to_hex(g), 40, '0') AS addr) a WHERE s.id = $1`,
    [template.subscriptionId, n],
  );
  await rawPool().query("UPDATE webhook_subscriptions SET start_block = 1 WHERE id = $1", [template.subscriptionId]);
  await rawPool().query("VACUUM ANALYZE webhook_subscriptions");
  const insertS = (performance.now() - t0) / 1000;
  const subs = n + 1;
  /** Median ms of `rounds` calls, and PostgreSQL's CPU µs per call. */
  const time = async (f: (round: number) => Promise<unknown>, rounds: number) => {
    const ms: number[] = [];
    const cpu = startCpuAccounting({ postgres: postgresPids });
    for (let i = 0; i < rounds; i++) {
      const t = performance.now();
      await f(i);
      ms.push(performance.now() - t);
    }
    return { ms: median(ms), pgUs: usPer(cpu(), "postgres", rounds) };
  };
  // The follower's own state and functions, over the EVM source of the network (no node is asked).
  const source = new EvmChainSource(network);
  const state = await networkFollower(network, { source }).init(new AbortController().signal);
  const held = () => state.streams.reduce((sum, s) => sum + s.startOf.size, 0);
  const heap0 = heapAfterGc();
  const full = await time(() => refreshSubscriptions(network.slug, source, state), 1);
  const heapState = heapAfterGc() - heap0;
  if (held() !== subs) throw new Error(`the follower holds ${held()} subscriptions, not ${subs}`);
  const rounds = 200;
  const poll = await time(() => refreshSubscriptions(network.slug, source, state), rounds);
  const assign = await time(() => assignStartBlocks(network.slug, 2n), rounds);
  const networks = await time(() => networksWithSubscriptions(), rounds);
  // One subscription at a time given another contract (as a PATCH of its condition does, its
  // start block then given at once), then read: what the follower does after each change.
  const changes = 20;
  const change = await time(async (i) => {
    await rawPool().query(
      `UPDATE webhook_subscriptions SET condition = jsonb_set(condition, '{address}', to_jsonb($2::text)), log_address = $2, start_block = 2 WHERE id = $1`,
      [`wh_bench${i + 1}`, `0x${"33".repeat(19)}${(i + 16).toString(16).padStart(2, "0")}`],
    );
    await refreshSubscriptions(network.slug, source, state);
  }, changes);
  const deletion = await time(async (i) => {
    await rawPool().query("DELETE FROM webhook_subscriptions WHERE id = $1", [`wh_bench${n - i}`]);
    await refreshSubscriptions(network.slug, source, state);
  }, changes);
  if (held() !== subs - changes) throw new Error(`the follower holds ${held()} subscriptions after ${changes} deletions, not ${subs - changes}`);
  const tableBytes = Number((await rawPool().query<{ b: string }>("SELECT pg_total_relation_size('webhook_subscriptions') AS b")).rows[0]!.b);
  await rawPool().query("DELETE FROM webhook_subscriptions WHERE project_id = $1", [projectId]);
  await rawPool().query("DELETE FROM webhook_subscription_deletions WHERE network = $1", [network.slug]);
  const row = (what: string, t: { ms: number; pgUs: number }, per?: number) => [
    what,
    t.ms < 10 ? t.ms.toFixed(2) : t.ms.toFixed(0),
    Number.isNaN(t.pgUs) ? "—" : t.pgUs < 10_000 ? (t.pgUs / 1000).toFixed(2) : (t.pgUs / 1000).toFixed(0),
    per === undefined ? "—" : `${((t.ms * 1000) / per).toFixed(2)} µs`,
  ];
  const table = markdownTable(
    ["what", `ms at ${subs.toLocaleString("en-US")} subscriptions`, "PostgreSQL CPU, ms", "per subscription"],
    [
      row("read of all (the follower's start, or a restart after a failure)", full, subs),
      row("read when nothing changed (every head move, at least every 1 s)", poll),
      row("start blocks given when none is new (every poll)", assign),
      row("networks with active subscriptions (the engine, every 3 s in every worker process)", networks),
      row("one subscription changed (condition), then read and applied", change),
      row("one subscription deleted, then read and applied (its deletion forgotten)", deletion),
      ["heap: the follower's matchers and start blocks, MiB", (heapState / 2 ** 20).toFixed(0), "—", `${(heapState / subs).toFixed(0)} B`],
      ["webhook_subscriptions with indexes, MiB", (tableBytes / 2 ** 20).toFixed(0), "—", `${(tableBytes / subs).toFixed(0)} B`],
    ],
  );
  return {
    title: "Subscriptions: what a network's active subscriptions cost its follower",
    text: [
      `${subs.toLocaleString("en-US")} active LOG subscriptions of one network (ethereum-mainnet), each on its own contract, inserted in ${insertS.toFixed(0)} s as copies of one made through the service. Timed in this process with the follower's own functions and state (lib/webhooks/engine/follower.ts refreshSubscriptions, assignStartBlocks, networksWithSubscriptions; the EVM matcher): one read of all, medians of ${rounds} reads that find nothing, of ${rounds} start block updates that give none and of ${rounds} looks for networks, of ${changes} changes and of ${changes} deletions each followed by the read that applies it. PostgreSQL CPU per call (its processes' CPU time over the calls, in 10 ms ticks). Heap after a full collection.`,
      "",
      table,
    ].join("\n"),
    verdicts: [],
    failed: false,
  };
}
