/**
 * `npm run bench -- webhook-delivery`: how fast the delivery workers empty a queue of due webhook
 * messages to a local receiver, beside the bare rate at which this machine can POST the same
 * bodies to the same receiver.
 *
 *   (r) the receiver: bench/baseline-server.mjs in its own process (reads the body, answers 200).
 *   (d) delivery: N messages written by the outbox (lib/webhooks/outbox.ts) over S subscriptions,
 *       all pointing at (r); one delivery worker in this process (lib/webhooks/delivery/worker.ts)
 *       claims, signs, POSTs, records every attempt and meters, until all are SUCCESS.
 *   (b) bare: undici Pool to (r), the same bodies, as many in flight as (d) may have to one host
 *       (WEBHOOK_DELIVERY_PER_HOST), keep-alive; nothing else.
 *
 * Target (issue 10): deliveries per second at steady state ≥ 2,000, stated beside (b).
 */
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
import { enqueueMessages } from "@/lib/webhooks/outbox";
import { createWebhook } from "@/lib/webhooks/service";
import { monotonicUs } from "./cpu-profile";
import { throwawayDatabase } from "./database";
import { spawnNode, waitUntilReady } from "./processes";
import { machineInfo } from "./resources";
import { codeVersion, fmt, markdownTable, prependResultsSection } from "./results";
import { wholeNumberOption } from "./options";

const USAGE = `Usage: npm run bench -- webhook-delivery [options]
  --messages N        messages to deliver (default 20000)
  --subscriptions S   subscriptions they are spread over (default 100)
  --per-host P        deliveries in flight to the receiver (default 16, the WEBHOOK_DELIVERY_PER_HOST default)
  --dry-run           print the results without writing bench/RESULTS.md`;

const TARGET_PER_S = 2000;
const log = (msg: string) => console.error(`[bench] ${msg}`);

function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      messages: { type: "string" },
      subscriptions: { type: "string" },
      "per-host": { type: "string" },
      "dry-run": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) return undefined;
  const int = wholeNumberOption(USAGE);
  return {
    messages: int(values.messages, 20_000, "messages", { min: 100, max: 1_000_000 }),
    subscriptions: int(values.subscriptions, 100, "subscriptions", { min: 1, max: 10_000 }),
    perHost: int(values["per-host"], 16, "per-host", { min: 1, max: 1000 }),
    dryRun: values["dry-run"] ?? false,
  };
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
  process.env.NEXTAUTH_SECRET ??= process.env.APP_SECRET;
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
  await webhookBenchDatabase("bench-webhook-delivery-");

  const port = await freePort();
  const receiver = spawnNode("receiver", ["bench/baseline-server.mjs"], { env: { ...process.env, PORT: String(port), BENCH_BODY: "{}" } });
  const receiverUrl = `http://127.0.0.1:${port}/hooks`;
  await waitUntilReady(receiver, async () => (await fetch(receiverUrl, { method: "POST", body: "{}" })).ok);

  log(`creating ${opts.subscriptions} subscriptions and ${opts.messages} messages…`);
  const user = await createUser({ email: `bench-${Date.now()}@example.com`, password: "correct horse battery" });
  const { projectId } = await createProject(user.id, "Webhook delivery bench");
  await db().project.update({ where: { id: projectId }, data: { plan: "ENTERPRISE" } });
  const network = networkBySlug("ethereum-mainnet")!;
  const subs: string[] = [];
  for (let i = 0; i < opts.subscriptions; i++) {
    const sub = await createWebhook(projectId, network, { eventType: "LOG", description: `bench ${i}`, notification: { webhookUrl: receiverUrl }, condition: { address: `0x${"11".repeat(20)}`, topics: [`0x${"22".repeat(32)}`] } });
    subs.push(sub.subscriptionId);
  }
  const log0 = { address: `0x${"11".repeat(20)}`, topics: [`0x${"22".repeat(32)}`], data: `0x${"00".repeat(64)}`, block_number: 1, transaction_hash: `0x${"33".repeat(32)}`, transaction_index: 0, log_index: 0, block_hash: `0x${"44".repeat(32)}`, block_timestamp: 1_700_000_000, removed: false, type: "log" };
  const BATCH = 1000;
  for (let i = 0; i < opts.messages; i += BATCH) {
    const n = Math.min(BATCH, opts.messages - i);
    await rawTransaction((client) =>
      enqueueMessages(client, Array.from({ length: n }, (_, j) => ({ subscriptionId: subs[(i + j) % subs.length]!, blockNumber: 1n, blockHash: log0.block_hash, content: { messages: [{ ...log0, log_index: j }] } }))),
    );
  }
  await db().$executeRawUnsafe("ANALYZE webhook_messages");
  const bodies = (await db().$queryRaw<{ body: string }[]>`SELECT payload::text AS body FROM webhook_messages LIMIT 5000`).map((r) => r.body);
  const bytes = bodies.reduce((s, b) => s + b.length, 0) / bodies.length;

  log(`bare POSTs to the receiver (${opts.perHost} in flight)…`);
  const bareBodies = Array.from({ length: opts.messages }, (_, i) => bodies[i % bodies.length]!);
  await bareRate(receiverUrl, bareBodies.slice(0, 2000), opts.perHost); // warm-up
  const bare = await bareRate(receiverUrl, bareBodies, opts.perHost);

  log("delivering…");
  const meter = new UsageMeter();
  const started = performance.now();
  const windowStart = monotonicUs();
  const worker = startDelivery({ meter, retention: false, perHost: opts.perHost, concurrency: Math.max(opts.perHost, 256) });
  let left = opts.messages;
  while (left > 0) {
    await new Promise((r) => setTimeout(r, 100));
    // Through node-postgres: a Prisma call here (its query compiler) took ~5 ms of this process's CPU
    // each time, away from the worker it measures.
    left = Number((await rawPool().query<{ n: string }>("SELECT count(*) AS n FROM webhook_messages WHERE status = 'PENDING'")).rows[0]!.n);
  }
  const seconds = (performance.now() - started) / 1000;
  // For `node --cpu-prof`: summarizeCpuProfile(file, root, [[start, end]]) keeps this window.
  log(`delivery window (monotonic µs): ${windowStart} ${monotonicUs()}`);
  await worker.stop();
  await meter.stop();
  const failed = await db().webhookMessage.count({ where: { status: { not: "SUCCESS" } } });
  const attempts = await db().webhookAttempt.count();
  const perSec = opts.messages / seconds;
  await disconnectDb();
  await receiver.stop();

  const table = markdownTable(
    ["path", "messages", "in flight to the receiver", "per second", "failed"],
    [
      ["(b) bare undici POSTs", String(opts.messages), String(opts.perHost), fmt.rps(bare.perSec), String(bare.failures)],
      ["(d) delivery workers", String(opts.messages), String(opts.perHost), fmt.rps(perSec), String(failed)],
    ],
  );
  const verdict = markdownTable(
    ["target", "measured", "verdict"],
    [
      [`deliveries/s ≥ ${TARGET_PER_S.toLocaleString("en-US")}`, fmt.rps(perSec), perSec >= TARGET_PER_S ? "PASS" : "FAIL"],
      ["(d)/(b)", fmt.ratio(perSec / bare.perSec), "—"],
    ],
  );
  const section = [
    `## webhook-delivery — ${new Date().toISOString()}`,
    "",
    `Machine: ${machineInfo()}. Code: ${codeVersion(["lib/webhooks/delivery", "lib/webhooks/signing.ts", "lib/webhooks/outbox.ts"])}.`,
    "",
    `Run: \`npm run bench -- webhook-delivery ${argv.join(" ")}\`. ${opts.messages.toLocaleString("en-US")} due messages (${Math.round(bytes)} bytes of JSON each on average) over ${opts.subscriptions} LOG subscriptions, all to one receiver (bench/baseline-server.mjs, its own process, answering 200). (d): one delivery worker in the bench process, clock from its start until no message is PENDING; each message claimed (SKIP LOCKED), signed (webhook-signature and x-signature), POSTed, its attempt recorded and its CU metered; ${attempts.toLocaleString("en-US")} attempts recorded. (b): undici Pool to the same receiver with the same bodies and the same number in flight, after a 2,000-request warm-up. Everything (PostgreSQL, receiver, bench) shares this machine's cores.`,
    "",
    table,
    "",
    verdict,
    "",
  ].join("\n");
  console.log(section);
  if (!opts.dryRun) await prependResultsSection(section);
  return failed === 0 ? 0 : 1;
}
