/**
 * `npm run bench -- webhook-delivery`: the delivery workers, in two parts (`--only throughput` or
 * `--only fairness` runs one).
 *
 * Throughput: how fast the workers empty a queue of due webhook messages to a local receiver,
 * beside the bare rate at which this machine can POST the same bodies to the same receiver.
 *   (r) the receiver: bench/baseline-server.mjs in its own process (reads the body, answers 200).
 *   (d) delivery: N messages written by the outbox (lib/webhooks/outbox.ts) over S subscriptions,
 *       all pointing at (r); one delivery worker in this process (lib/webhooks/delivery/worker.ts)
 *       claims, signs, POSTs, records every attempt and meters, until all are SUCCESS.
 *   (b) bare: undici Pool to (r), the same bodies, as many in flight as (d) may have to one host
 *       (WEBHOOK_DELIVERY_PER_HOST), keep-alive; nothing else.
 * Target (issue 10): deliveries per second at steady state ≥ 2,000, stated beside (b).
 *
 * Fairness: one subscription's backlog (5,000 messages) and a quiet subscription on the same
 * receiver host, which answers after a realistic delay (50 ms): the quiet one queues a message
 * every 100 ms while the backlog drains. Target (issue 23): the quiet subscription's enqueue →
 * first attempt delay, p99 < 1 s (before the round robin it waited for the backlog: 2.5–10 s).
 */
import os from "node:os";
import { parseArgs } from "node:util";
import { Pool } from "undici";
import { createUser } from "@/lib/auth/users";
import { db, disconnectDb, rawPool, rawTransaction } from "@/lib/db/client";
import { getEnv, resetEnv, setDatabaseUrl } from "@/lib/env";
import { networkBySlug } from "@/lib/networks";
import { createProject } from "@/lib/projects/service";
import { freePort } from "@/lib/testing/ports";
import { UsageMeter } from "@/lib/usage/meter";
import { startDelivery } from "@/lib/webhooks/delivery/worker";
import { percentile } from "./load";
import { enqueueMessages } from "@/lib/webhooks/outbox";
import { createWebhook } from "@/lib/webhooks/service";
import { monotonicUs } from "./cpu-profile";
import { throwawayDatabase } from "./database";
import { spawnNode, waitUntilReady } from "./processes";
import { machineInfo } from "./resources";
import { codeVersion, fmt, markdownTable, prependResultsSection } from "./results";
import { wholeNumberOption } from "./options";

const USAGE = `Usage: npm run bench -- webhook-delivery [options]
  --only P            run one part: throughput or fairness (default: both)
  --dry-run           print the results without writing bench/RESULTS.md
Throughput:
  --messages N        messages to deliver (default 20000)
  --subscriptions S   subscriptions they are spread over (default 100)
  --per-host P        deliveries in flight to the receiver (default 16, the WEBHOOK_DELIVERY_PER_HOST default)
Fairness:
  --backlog N         messages of the busy subscription (default 5000)
  --latency-ms L      the receiver's answer delay (default 50)
  --quiet N           messages of the quiet subscription, one every 100 ms (default 100)`;

const TARGET_PER_S = 2000;
const TARGET_QUIET_P99_MS = 1000;
const QUIET_EVERY_MS = 100;
const log = (msg: string) => console.error(`[bench] ${msg}`);

function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      only: { type: "string" },
      messages: { type: "string" },
      subscriptions: { type: "string" },
      "per-host": { type: "string" },
      backlog: { type: "string" },
      "latency-ms": { type: "string" },
      quiet: { type: "string" },
      "dry-run": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) return undefined;
  if (values.only !== undefined && values.only !== "throughput" && values.only !== "fairness") throw new Error(`--only must be throughput or fairness, got "${values.only}"\n${USAGE}`);
  const int = wholeNumberOption(USAGE);
  return {
    only: values.only,
    messages: int(values.messages, 20_000, "messages", { min: 100, max: 1_000_000 }),
    subscriptions: int(values.subscriptions, 100, "subscriptions", { min: 1, max: 10_000 }),
    perHost: int(values["per-host"], 16, "per-host", { min: 1, max: 1000 }),
    backlog: int(values.backlog, 5000, "backlog", { min: 100, max: 100_000 }),
    latencyMs: int(values["latency-ms"], 50, "latency-ms", { min: 0, max: 10_000 }),
    quiet: int(values.quiet, 100, "quiet", { min: 10, max: 10_000 }),
    dryRun: values["dry-run"] ?? false,
  };
}
type Options = NonNullable<ReturnType<typeof parseOptions>>;

/** What a part gives the section: its text, its targets, and whether every message was delivered. */
interface Part {
  title: string;
  text: string;
  verdicts: Array<{ target: string; measured: string; pass: boolean | undefined }>;
  failed: number;
}

export async function bareRate(url: string, bodies: string[], concurrency: number): Promise<{ perSec: number; failures: number }> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: concurrency });
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        const res = await pool.request({ method: "POST", path: target.pathname, headers: { "content-type": "application/json" }, body });
        await res.body.dump();
        if (res.statusCode !== 200) failures++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return { perSec: bodies.length / seconds, failures };
}

/**
 * A throwaway database for a webhook bench, and the configuration it runs with: receivers on
 * loopback over plain HTTP allowed, logs at warn.
 */
export async function webhookBenchDatabase(prefix: string): Promise<{ url: string }> {
  const { url } = await throwawayDatabase(prefix);
  process.env.WEBHOOK_ALLOW_PRIVATE_URLS = "on";
  process.env.WEBHOOK_HTTPS_ONLY = "off";
  process.env.LOG_LEVEL ??= "warn";
  resetEnv();
  getEnv();
  setDatabaseUrl(url);
  return { url };
}

export async function webhookDeliveryBench(argv: string[]): Promise<number> {
  const opts = parseOptions(argv);
  if (!opts) {
    console.error(USAGE);
    return 0;
  }
  const started = new Date();
  await webhookBenchDatabase("bench-webhook-delivery-");
  const parts: Part[] = [];
  if (opts.only !== "fairness") parts.push(await measureThroughput(opts));
  if (opts.only !== "throughput") parts.push(await measureFairness(opts));
  await disconnectDb();

  const verdict = markdownTable(
    ["target", "measured", "verdict"],
    parts.flatMap((p) => p.verdicts.map((v) => [v.target, v.measured, v.pass === undefined ? "—" : v.pass ? "PASS" : "FAIL"])),
  );
  const section = [
    `## webhook-delivery — ${started.toISOString()}`,
    "",
    `- Command: \`npm run bench -- ${["webhook-delivery", ...argv].join(" ")}\`.`,
    `- Code: ${codeVersion(["lib/webhooks/delivery", "lib/webhooks/signing.ts", "lib/webhooks/outbox.ts"])}.`,
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
  return parts.every((p) => p.failed === 0 && p.verdicts.every((v) => v.pass !== false)) ? 0 : 1;
}

/** A project on the plan without bounds that matter here, with `n` LOG subscriptions to `url`. */
export async function benchSubscriptions(name: string, url: string, n: number): Promise<{ projectId: string; subs: string[] }> {
  const user = await createUser({ email: `bench-${Date.now()}-${n}@example.com`, password: "correct horse battery" });
  const { projectId } = await createProject(user.id, name);
  await db().project.update({ where: { id: projectId }, data: { plan: "ENTERPRISE" } });
  const network = networkBySlug("ethereum-mainnet")!;
  const subs: string[] = [];
  for (let i = 0; i < n; i++) {
    const sub = await createWebhook(projectId, network, { eventType: "LOG", description: `bench ${i}`, notification: { webhookUrl: url }, condition: { address: `0x${"11".repeat(20)}`, topics: [`0x${"22".repeat(32)}`] } });
    subs.push(sub.subscriptionId);
  }
  return { projectId, subs };
}

const log0 = { address: `0x${"11".repeat(20)}`, topics: [`0x${"22".repeat(32)}`], data: `0x${"00".repeat(64)}`, block_number: 1, transaction_hash: `0x${"33".repeat(32)}`, transaction_index: 0, log_index: 0, block_hash: `0x${"44".repeat(32)}`, block_timestamp: 1_700_000_000, removed: false, type: "log" };

/** `n` LOG messages as a follower writes them, spread over `subs`, 1,000 per transaction. */
export async function enqueueLogs(subs: readonly string[], n: number): Promise<void> {
  const BATCH = 1000;
  for (let i = 0; i < n; i += BATCH) {
    const count = Math.min(BATCH, n - i);
    await rawTransaction((client) =>
      enqueueMessages(client, Array.from({ length: count }, (_, j) => ({ subscriptionId: subs[(i + j) % subs.length]!, blockNumber: 1n, blockHash: log0.block_hash, content: { messages: [{ ...log0, log_index: j }] } }))),
    );
  }
}

/** A receiver (bench/baseline-server.mjs) in its own process on a free port. */
export async function startReceiver(delayMs: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const receiver = spawnNode("receiver", ["bench/baseline-server.mjs"], { env: { ...process.env, PORT: String(port), BENCH_BODY: "{}", BENCH_DELAY_MS: String(delayMs) } });
  const url = `http://127.0.0.1:${port}/hooks`;
  await waitUntilReady(receiver, async () => (await fetch(url, { method: "POST", body: "{}" })).ok);
  return { url, stop: () => receiver.stop() };
}

/** Messages of these subscriptions still PENDING (node-postgres: a Prisma call costs this process ~5 ms of CPU, away from the worker measured). */
async function pendingOf(subs: readonly string[]): Promise<number> {
  return Number((await rawPool().query<{ n: string }>("SELECT count(*) AS n FROM webhook_messages WHERE subscription_id = ANY($1) AND status = 'PENDING'", [subs])).rows[0]!.n);
}

async function measureThroughput(opts: Options): Promise<Part> {
  const receiver = await startReceiver(0);
  log(`creating ${opts.subscriptions} subscriptions and ${opts.messages} messages…`);
  const { projectId, subs } = await benchSubscriptions("Webhook delivery bench", receiver.url, opts.subscriptions);
  await enqueueLogs(subs, opts.messages);
  await db().$executeRawUnsafe("ANALYZE webhook_messages");
  const bodies = (await db().$queryRaw<{ body: string }[]>`SELECT payload::text AS body FROM webhook_messages WHERE project_id = ${projectId} LIMIT 5000`).map((r) => r.body);
  const bytes = bodies.reduce((sum, b) => sum + b.length, 0) / bodies.length;

  log(`bare POSTs to the receiver (${opts.perHost} in flight)…`);
  const bareBodies = Array.from({ length: opts.messages }, (_, i) => bodies[i % bodies.length]!);
  await bareRate(receiver.url, bareBodies.slice(0, 2000), opts.perHost); // warm-up
  const bare = await bareRate(receiver.url, bareBodies, opts.perHost);

  log("delivering…");
  const meter = new UsageMeter();
  const started = performance.now();
  const windowStart = monotonicUs();
  const worker = startDelivery({ meter, perHost: opts.perHost, concurrency: Math.max(opts.perHost, 256), projectIds: [projectId] });
  while ((await pendingOf(subs)) > 0) await new Promise((r) => setTimeout(r, 100));
  const seconds = (performance.now() - started) / 1000;
  // For `node --cpu-prof`: summarizeCpuProfile(file, root, [[start, end]]) keeps this window.
  log(`delivery window (monotonic µs): ${windowStart} ${monotonicUs()}`);
  await worker.stop();
  await meter.stop();
  const failed = await db().webhookMessage.count({ where: { projectId, status: { not: "SUCCESS" } } });
  const attempts = await db().webhookAttempt.count({ where: { projectId } });
  const perSec = opts.messages / seconds;
  await receiver.stop();

  const table = markdownTable(
    ["path", "messages", "in flight to the receiver", "per second", "failed"],
    [
      ["(b) bare undici POSTs", String(opts.messages), String(opts.perHost), fmt.rps(bare.perSec), String(bare.failures)],
      ["(d) delivery workers", String(opts.messages), String(opts.perHost), fmt.rps(perSec), String(failed)],
    ],
  );
  return {
    title: "Throughput",
    text: [
      `${opts.messages.toLocaleString("en-US")} due messages (${Math.round(bytes)} bytes of JSON each on average) over ${opts.subscriptions} LOG subscriptions, all to one receiver (bench/baseline-server.mjs, its own process, answering 200). (d): one delivery worker in the bench process, clock from its start until no message is PENDING; each message claimed (SKIP LOCKED), signed (webhook-signature and x-signature), POSTed, its attempt recorded and its CU metered; ${attempts.toLocaleString("en-US")} attempts recorded. (b): undici Pool to the same receiver with the same bodies and the same number in flight, after a 2,000-request warm-up. Everything (PostgreSQL, receiver, bench) shares this machine's cores.`,
      "",
      table,
    ].join("\n"),
    verdicts: [
      { target: `deliveries/s ≥ ${TARGET_PER_S.toLocaleString("en-US")}`, measured: fmt.rps(perSec), pass: perSec >= TARGET_PER_S },
      { target: "(d)/(b)", measured: fmt.ratio(perSec / bare.perSec), pass: undefined },
    ],
    failed,
  };
}

async function measureFairness(opts: Options): Promise<Part> {
  const receiver = await startReceiver(opts.latencyMs);
  log(`fairness: ${opts.backlog} messages of one subscription, then ${opts.quiet} of another on the same receiver (${opts.latencyMs} ms per answer)…`);
  const { projectId, subs } = await benchSubscriptions("Webhook fairness bench", receiver.url, 2);
  const [busy, quiet] = subs as [string, string];
  await enqueueLogs([busy], opts.backlog);
  await db().$executeRawUnsafe("ANALYZE webhook_messages");
  const meter = new UsageMeter();
  const worker = startDelivery({ meter, projectIds: [projectId] });
  const started = performance.now();
  // Once the backlog is being delivered, the quiet subscription queues a message every 100 ms.
  while ((await pendingOf([busy])) > opts.backlog - 100) await new Promise((r) => setTimeout(r, 20));
  for (let i = 0; i < opts.quiet; i++) {
    await enqueueLogs([quiet], 1);
    await new Promise((r) => setTimeout(r, QUIET_EVERY_MS));
  }
  const backlogLeft = await pendingOf([busy]);
  while ((await pendingOf(subs)) > 0) await new Promise((r) => setTimeout(r, 100));
  const seconds = (performance.now() - started) / 1000;
  await worker.stop();
  await meter.stop();
  await receiver.stop();
  const delays = async (sub: string) =>
    Float64Array.from(
      (
        await rawPool().query<{ ms: number }>(
          `SELECT extract(epoch FROM a.started_at - m.created_at)::float8 * 1000 AS ms
           FROM webhook_messages m JOIN webhook_attempts a ON a.message_id = m.id AND a.attempt = 1 WHERE m.subscription_id = $1`,
          [sub],
        )
      ).rows.map((r) => r.ms),
    ).sort();
  const quietDelays = await delays(quiet);
  const failed = await db().webhookMessage.count({ where: { projectId, status: { not: "SUCCESS" } } });
  const p99 = percentile(quietDelays, 99);
  const ms = (v: number) => Math.round(v).toLocaleString("en-US");
  const perHost = getEnv().WEBHOOK_DELIVERY_PER_HOST;
  const table = markdownTable(
    ["subscription", "messages", "enqueue → first attempt p50 ms", "p99 ms", "max ms"],
    [["quiet (one every 100 ms)", String(quietDelays.length), ms(percentile(quietDelays, 50)), ms(p99), ms(quietDelays.at(-1) ?? NaN)]],
  );
  return {
    title: "Fairness: a quiet subscription beside another's backlog on one receiver",
    text: [
      `One project, two LOG subscriptions on one receiver (bench/baseline-server.mjs, its own process, answering 200 after ${opts.latencyMs} ms). ${opts.backlog.toLocaleString("en-US")} messages of the busy one queued first; once its delivery is under way, the quiet one queues ${opts.quiet} messages, one every ${QUIET_EVERY_MS} ms (each its own transaction, as a follower writes a block). One delivery worker in the bench process with the configured bounds (${perHost} in flight to the host, ${getEnv().WEBHOOK_DELIVERY_CONCURRENCY} in all). The busy subscription still had ${backlogLeft.toLocaleString("en-US")} messages waiting when the quiet one queued its last; everything was delivered in ${seconds.toFixed(1)} s (${Math.round((opts.backlog + opts.quiet) / seconds).toLocaleString("en-US")} messages/s, the receiver's bound being ${Math.round((perHost * 1000) / Math.max(1, opts.latencyMs)).toLocaleString("en-US")}/s). Delay: the attempt's start (the worker's clock) minus the message's creation (PostgreSQL's), one machine.`,
      "",
      table,
    ].join("\n"),
    verdicts: [{ target: `quiet subscription's enqueue → first attempt p99 < ${TARGET_QUIET_P99_MS.toLocaleString("en-US")} ms behind a ${opts.backlog.toLocaleString("en-US")}-message backlog`, measured: `${ms(p99)} ms`, pass: p99 < TARGET_QUIET_P99_MS }],
    failed,
  };
}
