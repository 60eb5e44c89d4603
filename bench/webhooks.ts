/**
 * `npm run bench -- webhooks`: webhooks end to end on one EVM devnet, as the service runs them.
 *
 *   chain: a bare anvil (lib/evm/testing.ts spawnAnvil) as optimism-sepolia's upstream, with the
 *     devnet Emitter deployed; automine off: the bench mines each block itself (evm_mine) and notes
 *     the wall-clock time just before asking, the block's mining time.
 *   subscriptions: S active LOG subscriptions with isInstant true on the network. M of them match
 *     the Emitter's Ping from the bench's sender (half on topic0 alone, half also on topics[1] =
 *     the sender), created through the API's service (createWebhook); the other S - M (inserted in
 *     bulk, copies of one created record) match nothing: a third on other contracts with Ping's
 *     topic0, most of the rest on the Emitter with other topic0s, and one in ten on the Emitter's
 *     Ping with another sender in topics[1] (checked against every Ping log).
 *   receiver: bench/webhook-receiver.mjs in its own process (node:http on loopback, answering 200),
 *     noting each arrival's wall-clock time.
 *   service: the engine (startWebhookEngine: the follower under its leader lock) and one delivery
 *     worker (startDelivery), with the service's defaults (WEBHOOK_FOLLOWER_POLL_MS,
 *     WEBHOOK_DELIVERY_POLL_MS and the outbox's NOTIFY, WEBHOOK_DELIVERY_PER_HOST), in the bench process.
 *
 * Measured: (1) latency: a block with one Ping every `--interval-ms`, `--blocks` times; each
 * delivery's arrival minus its block's mining time, p50 and p99. (2) throughput: `--burst` blocks
 * with one Ping each, mined back to back; deliveries per second at the receiver between the 10th
 * and the 90th percentile of their arrivals (steady state), beside bare undici POSTs of the same
 * bodies to the same receiver (bench/webhook-delivery.ts bareRate). (3) matching time per block at
 * 1, 100 and 10,000 subscriptions (bench/webhook-matching.ts).
 */
import { writeFileSync } from "node:fs";
import inspector from "node:inspector";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { createPublicClient, createTestClient, createWalletClient, http, pad, type Address } from "viem";
import { createUser } from "@/lib/auth/users";
import { db, disconnectDb, rawPool } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { DEVNET_CONTRACTS, Emitter } from "@/lib/evm/devnet/contracts";
import { spawnAnvil } from "@/lib/evm/testing";
import { configureNetworks, networkBySlug } from "@/lib/networks";
import { createProject } from "@/lib/projects/service";
import { services } from "@/lib/services";
import { freePort } from "@/lib/testing/ports";
import { UsageMeter } from "@/lib/usage/meter";
import { startDelivery } from "@/lib/webhooks/delivery/worker";
import { startWebhookEngine } from "@/lib/webhooks/engine/follower";
import { createWebhook } from "@/lib/webhooks/service";
import { cleanup } from "./cleanup";
import { isProjectFunction, summarizeCpuProfile } from "./cpu-profile";
import { spawnNode, waitUntilReady } from "./processes";
import { machineInfo } from "./resources";
import { wholeNumberOption } from "./options";
import { codeVersion, fmt, markdownTable, prependResultsSection } from "./results";
import { bareRate, webhookBenchDatabase } from "./webhook-delivery";
import { measureLogMatching } from "./webhook-matching";

const USAGE = `Usage: npm run bench -- webhooks [options]
  --subscriptions S   active LOG subscriptions (default 10000)
  --matching M        of them, those matching every Ping of the bench (default 100)
  --blocks N          latency phase: blocks with one Ping (default 30)
  --interval-ms T     latency phase: time between those blocks (default 1000)
  --burst B           throughput phase: blocks with one Ping mined back to back (default 200)
  --cpu-prof          profile the bench process (engine and delivery) during the burst and print
                      where its CPU time went, per delivery (the profiler adds overhead)
  --dry-run           print the results without writing bench/RESULTS.md`;

const SLUG = "optimism-sepolia";
const CHAIN_ID = 11155420;
const PING = DEVNET_CONTRACTS.emitter.events.Ping.topic0;
const TARGET_P50_MS = 250;
const TARGET_PER_S = 2000;
const log = (msg: string) => console.error(`[bench] ${msg}`);
const wallClock = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      subscriptions: { type: "string" },
      matching: { type: "string" },
      blocks: { type: "string" },
      "interval-ms": { type: "string" },
      burst: { type: "string" },
      "dry-run": { type: "boolean" },
      "cpu-prof": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) return undefined;
  const option = wholeNumberOption(USAGE);
  const int = (raw: string | undefined, fallback: number, name: string, min: number, max: number) => option(raw, fallback, name, { min, max });

  const subscriptions = int(values.subscriptions, 10_000, "subscriptions", 1, 100_000);
  return {
    subscriptions,
    matching: int(values.matching, 100, "matching", 1, subscriptions),
    blocks: int(values.blocks, 30, "blocks", 1, 1000),
    intervalMs: int(values["interval-ms"], 1000, "interval-ms", 10, 60_000),
    burst: int(values.burst, 200, "burst", 1, 10_000),
    dryRun: values["dry-run"] ?? false,
    cpuProf: values["cpu-prof"] ?? false,
  };
}

/** The in-process V8 profiler (node:inspector), so that only the burst is sampled. */
async function startProfiler(): Promise<{ stop(): Promise<string> }> {
  const session = new inspector.Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session.post(method, params ?? {}, (e, r) => (e ? reject(e) : resolve(r))));
  await post("Profiler.enable");
  await post("Profiler.setSamplingInterval", { interval: 500 });
  await post("Profiler.start");
  return {
    async stop() {
      const { profile } = (await post("Profiler.stop")) as { profile: unknown };
      session.disconnect();
      const file = path.join(os.tmpdir(), `blockgate-bench-webhooks-${Date.now()}.cpuprofile`);
      writeFileSync(file, JSON.stringify(profile));
      return file;
    },
  };
}

/** Where the bench process's CPU went during the burst, per delivery. */
function printProfile(file: string, deliveries: number): void {
  const s = summarizeCpuProfile(file);
  const busy = s.totalMs - s.idleMs;
  const us = (ms: number) => ((ms * 1000) / deliveries).toFixed(1);
  const pct = (ms: number) => `${((100 * ms) / busy).toFixed(1)} %`;
  console.log(`\nCPU profile of the burst: ${file} (sampled every 500 µs; ${us(busy)} µs busy per delivery)`);
  console.log("\nSelf time by origin:");
  console.log(markdownTable(["origin", "µs/delivery", "share"], s.origins.slice(0, 15).map((o) => [o.origin, us(o.selfMs), pct(o.selfMs)])));
  console.log("\nProject functions by inclusive time:");
  console.log(
    markdownTable(
      ["function", "total µs/delivery", "share", "self µs/delivery"],
      s.functions
        .filter(isProjectFunction)
        .sort((a, b) => b.totalMs - a.totalMs)
        .slice(0, 30)
        .map((f) => [f.name, us(f.totalMs), pct(f.totalMs), us(f.selfMs)]),
    ),
  );
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? NaN;

export async function webhooksBench(argv: string[]): Promise<number> {
  const opts = parseOptions(argv);
  if (!opts) {
    console.error(USAGE);
    return 0;
  }
  const loadBefore = os.loadavg();
  const { url: databaseUrl } = await webhookBenchDatabase("bench-webhooks-");

  log("starting anvil and the receiver…");
  const anvil = await spawnAnvil({ chainId: CHAIN_ID });
  cleanup.add("stop anvil", () => anvil.stop());
  configureNetworks({ UPSTREAM_OPTIMISM_SEPOLIA: anvil.url });
  services().evm.configure({ blockTimeMs: 1000 });
  const network = networkBySlug(SLUG)!;
  const transport = http(anvil.url);
  const pub = createPublicClient({ transport, pollingInterval: 50 });
  const wallet = createWalletClient({ transport });
  const testClient = createTestClient({ mode: "anvil", transport });
  const [alice, bob] = (await wallet.getAddresses()) as [Address, Address];
  const deployed = await pub.waitForTransactionReceipt({ hash: await wallet.deployContract({ abi: Emitter.abi, bytecode: Emitter.bytecode, account: alice, chain: null }) });
  const emitter = deployed.contractAddress!.toLowerCase();
  await testClient.setAutomine(false);

  const port = await freePort();
  const receiver = spawnNode("receiver", ["bench/webhook-receiver.mjs"], { env: { ...process.env, PORT: String(port) } });
  const receiverUrl = `http://127.0.0.1:${port}/hooks`;
  await waitUntilReady(receiver, async () => (await fetch(`http://127.0.0.1:${port}/`)).ok);
  const arrivals = async () => (await (await fetch(`http://127.0.0.1:${port}/`)).json()) as Array<[number, number]>;

  log(`creating ${opts.subscriptions} subscriptions (${opts.matching} matching)…`);
  const user = await createUser({ email: `bench-${Date.now()}@example.com`, password: "correct horse battery" });
  const { projectId } = await createProject(user.id, "Webhooks bench");
  await db().project.update({ where: { id: projectId }, data: { plan: "ENTERPRISE" } });
  for (let i = 0; i < opts.matching; i++) {
    const topics = i % 2 === 0 ? [PING] : [PING, pad(alice)];
    await createWebhook(projectId, network, { eventType: "LOG", isInstant: true, description: `bench match ${i}`, notification: { webhookUrl: receiverUrl }, condition: { address: emitter, topics } });
  }
  const others = opts.subscriptions - opts.matching;
  if (others > 0) {
    const template = (await db().webhookSubscription.findFirstOrThrow({ where: { projectId } })).id;
    // g % 10 = 0: the Emitter's Ping from another sender; g % 3 = 0 otherwise: another contract's
    // Ping; the rest: the Emitter with another topic0.
    await rawPool().query(
      `WITH spec AS (
         SELECT g,
           CASE WHEN g % 10 = 0 THEN $2 WHEN g % 3 = 0 THEN '0x' || lpad(to_hex(g), 40, '0') ELSE $2 END AS address,
           CASE WHEN g % 10 = 0 OR g % 3 = 0 THEN $3 ELSE '0x' || md5(g::text) || md5((g + 1)::text) END AS topic0,
           CASE WHEN g % 10 = 0 THEN $4 ELSE NULL END AS topic1
         FROM generate_series(1, $5::int) g
       )
       INSERT INTO webhook_subscriptions (id, project_id, network, event_type, description, webhook_url, is_instant, is_active, condition, log_address, log_topic0, signing_key, sequence, created_at, updated_at)
       SELECT 'wh_bench' || spec.g, t.project_id, t.network, t.event_type, 'bench other ' || spec.g, t.webhook_url, true, true,
         jsonb_build_object('address', spec.address, 'topics', CASE WHEN spec.topic1 IS NULL THEN jsonb_build_array(spec.topic0) ELSE jsonb_build_array(spec.topic0, spec.topic1) END),
         spec.address, spec.topic0, t.signing_key, 0, now(), now()
       FROM spec, webhook_subscriptions t WHERE t.id = $1`,
      [template, emitter, PING, pad(bob), others],
    );
  }
  await rawPool().query("ANALYZE webhook_subscriptions");

  const meter = new UsageMeter();
  const engine = startWebhookEngine({ databaseUrl, include: (n) => n.slug === SLUG });
  const delivery = startDelivery({ meter });
  cleanup.add("stop the engine and delivery", async () => {
    await engine.stop();
    await delivery.stop();
  });

  const mined = new Map<number, number>();
  const mineBlock = async () => {
    await wallet.writeContract({ address: emitter as Address, abi: Emitter.abi, functionName: "ping", args: [1n, "bench"], account: alice, chain: null });
    const at = wallClock();
    await testClient.mine({ blocks: 1 });
    // Uncached: viem caches the block number for its polling interval, shorter than a burst's blocks.
    const number = Number(await pub.getBlockNumber({ cacheTime: 0 }));
    mined.set(number, at);
    return number;
  };
  const arrivalCount = async () => Number(await (await fetch(`http://127.0.0.1:${port}/count`)).text());
  // Each phase waits for the one before it, so the arrivals of a phase are those after `before`.
  const waitForDeliveries = async (blocks: number[], what: string, before: number, timeoutMs = 300_000) => {
    const want = new Set(blocks);
    const expected = blocks.length * opts.matching;
    for (const until = Date.now() + timeoutMs; ; await sleep(200)) {
      if ((await arrivalCount()) - before < expected && Date.now() <= until) continue;
      const got = (await arrivals()).filter(([b]) => want.has(b));
      if (got.length >= expected) return got;
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}: ${got.length} of ${expected} arrived (blocks ${[...new Set(got.map(([b]) => b))].length} of ${blocks.length}; PENDING ${await db().webhookMessage.count({ where: { status: "PENDING" } })})`);
    }
  };

  // Warm-up: the engine picks the network up (its poll), the follower starts after the head and the
  // subscriptions get their start block; pings until a block's messages arrive.
  log("warming up (the engine starts following)…");
  for (let arrived = false, until = Date.now() + 120_000; !arrived; ) {
    const b = await mineBlock();
    await sleep(1000);
    arrived = (await arrivals()).some(([n]) => n === b);
    if (!arrived && Date.now() > until) throw new Error("no delivery within 120 s of the engine's start");
  }
  await waitForDeliveries([...mined.keys()].slice(-1), "the warm-up block", 0);

  log(`latency: ${opts.blocks} blocks, one every ${opts.intervalMs} ms…`);
  const latencyBlocks: number[] = [];
  const beforeLatency = await arrivalCount();
  for (let i = 0; i < opts.blocks; i++) {
    const t = Date.now();
    latencyBlocks.push(await mineBlock());
    await sleep(Math.max(0, opts.intervalMs - (Date.now() - t)));
  }
  const latencyArrivals = await waitForDeliveries(latencyBlocks, "the latency phase", beforeLatency);
  const latencies = latencyArrivals.map(([b, at]) => at - mined.get(b)!).sort((a, b) => a - b);

  log(`throughput: ${opts.burst} blocks back to back (${(opts.burst * opts.matching).toLocaleString("en-US")} deliveries)…`);
  const burstBlocks: number[] = [];
  const beforeBurst = await arrivalCount();
  const profiler = opts.cpuProf ? await startProfiler() : undefined;
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < opts.burst; i++) burstBlocks.push(await mineBlock());
  const burstMined = (mined.get(burstBlocks.at(-1)!)! - mined.get(burstBlocks[0]!)!) / 1000;
  const burstArrivals = (await waitForDeliveries(burstBlocks, "the throughput phase", beforeBurst, 180_000)).map(([, at]) => at).sort((a, b) => a - b);
  const cpu = process.cpuUsage(cpuBefore);
  const burstCpuUs = (cpu.user + cpu.system) / burstArrivals.length;
  const profile = await profiler?.stop();
  const lo = quantile(burstArrivals, 0.1);
  const hi = quantile(burstArrivals, 0.9);
  const steadyPerSec = (burstArrivals.filter((t) => t >= lo && t <= hi).length - 1) / ((hi - lo) / 1000);
  const wholePerSec = burstArrivals.length / ((burstArrivals.at(-1)! - mined.get(burstBlocks[0]!)!) / 1000);
  const burstLatencies = (await arrivals()).filter(([b]) => burstBlocks.includes(b)).map(([b, at]) => at - mined.get(b)!).sort((a, b) => a - b);

  await engine.stop();
  await delivery.stop();
  await meter.stop();
  const failed = await db().webhookMessage.count({ where: { status: { not: "SUCCESS" } } });
  const bodies = (await rawPool().query<{ body: string }>("SELECT payload::text AS body FROM webhook_messages LIMIT 2000")).rows.map((r) => r.body);
  const bytes = bodies.reduce((s, b) => s + b.length, 0) / bodies.length;

  log("bare POSTs to the receiver (16 in flight)…");
  const bareBodies = Array.from({ length: burstArrivals.length }, (_, i) => bodies[i % bodies.length]!);
  await bareRate(receiverUrl, bareBodies.slice(0, 2000), 16); // warm-up
  const bare = await bareRate(receiverUrl, bareBodies, 16);

  log("matching time per block…");
  const matching = measureLogMatching();
  await disconnectDb();
  await receiver.stop();
  await anvil.stop();
  const loadAfter = os.loadavg();

  const p50 = quantile(latencies, 0.5);
  const p99 = quantile(latencies, 0.99);
  const section = [
    `## webhooks — ${new Date().toISOString()}`,
    "",
    `Machine: ${machineInfo()}; load average ${loadBefore[0]!.toFixed(1)} at the start, ${loadAfter[0]!.toFixed(1)} at the end (other work shares the 2 cores). Code: ${codeVersion(["lib/webhooks/engine", "lib/webhooks/delivery", "lib/webhooks/outbox.ts", "lib/webhooks/signing.ts"])}.`,
    "",
    `Run: \`npm run bench -- webhooks ${argv.join(" ")}\`. One anvil as ${SLUG}'s upstream with the devnet Emitter; ${opts.subscriptions.toLocaleString("en-US")} active LOG subscriptions, isInstant true, of which ${opts.matching} match each block's Ping (half on topic0, half also on topics[1] = the sender) and ${others.toLocaleString("en-US")} match nothing (other contracts, other topic0s, one in ten the Emitter's Ping from another sender); a receiver on loopback (bench/webhook-receiver.mjs, node:http, 200); the engine's follower and one delivery worker with the service's defaults (a follower poll every ${getEnv().WEBHOOK_FOLLOWER_POLL_MS} ms; delivery woken by the outbox's NOTIFY, else polling every ${getEnv().WEBHOOK_DELIVERY_POLL_MS} ms; ${getEnv().WEBHOOK_DELIVERY_PER_HOST} in flight per receiver host) in the bench process. Latency: from just before the bench asked anvil to mine the block (evm_mine) to the receiver's arrival. ${(bytes | 0).toLocaleString("en-US")} bytes of JSON per message on average; ${failed} message(s) not SUCCESS.`,
    "",
    markdownTable(
      ["phase", "blocks", "deliveries", "p50 (ms)", "p99 (ms)", "deliveries/s"],
      [
        [`latency: a block every ${opts.intervalMs} ms`, String(opts.blocks), String(latencies.length), p50.toFixed(0), p99.toFixed(0), "—"],
        [`throughput: blocks back to back (mined in ${burstMined.toFixed(1)} s)`, String(opts.burst), String(burstArrivals.length), quantile(burstLatencies, 0.5).toFixed(0), quantile(burstLatencies, 0.99).toFixed(0), `${fmt.rps(steadyPerSec)} steady (10th–90th pct of arrivals); ${fmt.rps(wholePerSec)} first block mined → last arrival`],
        ["bare undici POSTs, same bodies, same receiver, 16 in flight", "—", String(bareBodies.length), "—", "—", fmt.rps(bare.perSec)],
      ],
    ),
    "",
    "Matching one block of 500 logs (bench/webhook-matching.ts, in process):",
    "",
    markdownTable(
      ["subscriptions", "match p50 (ms/block)", "match p99 (ms/block)", "log messages matched"],
      matching.map((r) => [r.subscriptions.toLocaleString("en-US"), r.p50.toFixed(3), r.p99.toFixed(3), String(r.matches)]),
    ),
    "",
    markdownTable(
      ["target", "measured", "verdict"],
      [
        [`block mined → delivered p50 < ${TARGET_P50_MS} ms`, `${p50.toFixed(0)} ms`, p50 < TARGET_P50_MS ? "PASS" : "FAIL"],
        [`deliveries/s ≥ ${TARGET_PER_S.toLocaleString("en-US")} at steady state`, fmt.rps(steadyPerSec), steadyPerSec >= TARGET_PER_S ? "PASS" : "FAIL"],
        ["deliveries/s ÷ bare POSTs/s", fmt.ratio(steadyPerSec / bare.perSec), "—"],
      ],
    ),
    "",
    `CPU of the bench process (engine, delivery, the bench's own mining and polling) from the burst's first block to its last arrival: ${burstCpuUs.toFixed(0)} µs per delivery (user + system; the receiver and PostgreSQL not included).`,
    "",
  ].join("\n");
  console.log(section);
  if (profile) printProfile(profile, burstArrivals.length);
  if (!opts.dryRun) await prependResultsSection(section);
  return failed === 0 ? 0 : 1;
}
