/**
 * `npm run bench -- node`: the EVM node path against a real upstream (anvil).
 *
 * Four paths to the same anvil (--chain-id 1 --block-time 2; chain 1 because the gateway checks that an upstream serves its network's chain):
 *   (d) direct: straight to anvil;
 *   (p) bare proxy: bench/node-proxy.mjs with node:http's http.request and a keep-alive agent;
 *   (u) bare proxy: bench/node-proxy.mjs with an undici Pool;
 *   (g) gateway: the real server (bin/start.mjs --api-only, production, ENTERPRISE key) with
 *       UPSTREAM_ETHEREUM_MAINNET=<anvil>, POST /node/ethereum-mainnet; it batches the single calls of
 *       one event-loop turn upstream (UPSTREAM_BATCH_MAX), which a bare proxy does not.
 * Methods: eth_blockNumber (the gateway answers it from its head cache, 250 ms for an upstream
 * network, so most gateway requests do not reach anvil) and eth_getBlockByNumber("latest", false)
 * (forwarded every time). Each at c=1 and c=32: warm-up (discarded) then a measured autocannon run,
 * `--rounds` times with the paths taken in turn (so a burst of load elsewhere on the machine does
 * not land on one path only); the tables show the median and the spread of the rounds.
 * Targets: gateway throughput ≥ 0.9 × the best bare proxy's at c=32 (at c=1 req/s is 1/latency: shown,
 * and held by the next target); gateway p50 − that proxy's p50 < 0.3 ms at c=1.
 */
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { createUser } from "@/lib/auth/users";
import { db, disconnectDb } from "@/lib/db/client";
import { Plan } from "@/lib/db/generated/enums";
import { anvilBinary } from "@/lib/evm/devnet/anvil";
import { createProject } from "@/lib/projects/service";
import { freePort } from "@/lib/testing/ports";
import { setTimeout as sleep } from "node:timers/promises";
import { cleanup, tempDir } from "./cleanup";
import { isProjectFunction, monotonicUs, summarizeCpuProfile } from "./cpu-profile";
import { secret, throwawayDatabase } from "./database";
import { runLoad, type LoadResult } from "./load";
import { spawnNode, waitUntilReady, workerPid } from "./processes";
import { machineInfo, memoryOf, startCpuAccounting } from "./resources";
import { codeVersion, fmt, markdownTable, prependResultsSection } from "./results";

const USAGE = `Usage: npm run bench -- node [options]
  --duration S      measured seconds per run (default 8)
  --warmup S        warm-up seconds per run (default 2)
  --connections L   comma-separated concurrencies (default 1,32)
  --rounds N        measured runs per row, paths taken in turn (default 1)
  --paths L         comma-separated paths among d,p,u,g (default all)
  --methods L       comma-separated methods among blockNumber,getBlockByNumber (default both)
  --cpu-prof        run the gateway and the undici proxy under node --cpu-prof and print where their
                    CPU time went under load (bench/RESULTS.md is not written: profiling slows both)
  --dry-run         print the results without writing bench/RESULTS.md
  --verbose         echo the servers' output`;

const TARGET_RATIO = 0.9;
/** Throughput is held to TARGET_RATIO from this concurrency up; below it a run measures latency, held by TARGET_ADDED_P50_MS. */
const MIN_THROUGHPUT_CONNECTIONS = 8;
const TARGET_ADDED_P50_MS = 0.3;
const log = (msg: string) => console.error(`[bench] ${msg}`);

type PathId = "d" | "p" | "u" | "g";
const PATHS: PathId[] = ["d", "p", "u", "g"];
const PROXIES: PathId[] = ["p", "u"];
const LABEL: Record<PathId, string> = { d: "(d) anvil direct", p: "(p) proxy, node:http", u: "(u) proxy, undici", g: "(g) gateway" };
const METHODS = {
  eth_blockNumber: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
  "eth_getBlockByNumber(latest,false)": JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: ["latest", false] }),
};
type MethodName = keyof typeof METHODS;
const METHOD_OPTION: Record<string, MethodName> = { blockNumber: "eth_blockNumber", getBlockByNumber: "eth_getBlockByNumber(latest,false)" };

interface Run {
  r: LoadResult;
  cores: Record<string, number | undefined> | undefined;
}

/** The rounds of one method × path × concurrency. */
interface Row {
  method: MethodName;
  path: PathId;
  connections: number;
  runs: Run[];
}

/** CPU time of the process that answers on a path (anvil, a proxy, the gateway) per request answered, in µs: less sensitive than req/s to load elsewhere on the machine. */
const cpuPerRequest = (p: PathId, run: Run): number => {
  const cores = run.cores?.[p === "d" ? "anvil" : p === "g" ? "gateway" : "proxy"];
  return cores === undefined ? NaN : (cores * 1e6) / run.r.rps;
};

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
/** "median (min–max)" when there are several rounds. */
const spread = (values: number[], format: (v: number) => string): string =>
  values.length > 1 ? `${format(median(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})` : format(values[0] ?? NaN);

export async function nodeBench(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: "string" },
      warmup: { type: "string" },
      connections: { type: "string" },
      rounds: { type: "string" },
      "cpu-prof": { type: "boolean" },
      paths: { type: "string" },
      methods: { type: "string" },
      "dry-run": { type: "boolean" },
      verbose: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const durationSec = Number(values.duration ?? 8);
  const warmupSec = Number(values.warmup ?? 2);
  const connections = (values.connections ?? "1,32").split(",").map(Number);
  const rounds = Number(values.rounds ?? 1);
  const paths = values.paths === undefined ? PATHS : (values.paths.split(",") as PathId[]);
  const methods = values.methods === undefined ? (Object.keys(METHODS) as MethodName[]) : values.methods.split(",").map((m) => METHOD_OPTION[m]);
  if (
    !Number.isInteger(durationSec) ||
    durationSec < 1 ||
    !Number.isInteger(warmupSec) ||
    warmupSec < 0 ||
    !Number.isInteger(rounds) ||
    rounds < 1 ||
    connections.some((c) => !Number.isInteger(c) || c < 1) ||
    paths.some((p) => !PATHS.includes(p)) ||
    methods.some((m) => m === undefined)
  ) {
    throw new Error(USAGE);
  }
  const measuredMethods = methods.filter((m): m is MethodName => m !== undefined);
  const verbose = values.verbose ?? false;
  const root = process.cwd();
  const started = new Date();
  const version = codeVersion(["lib/server.ts", "lib/gateway", "lib/evm", "lib/upstream", "lib/keys", "lib/usage"], root);

  // 1. anvil.
  const anvilPort = await freePort();
  const anvilUrl = `http://127.0.0.1:${anvilPort}`;
  const anvil = spawn(anvilBinary(), ["--host", "127.0.0.1", "--port", String(anvilPort), "--chain-id", "1", "--block-time", "2", "--silent"], { detached: true, stdio: "ignore" });
  let anvilExited = false;
  anvil.once("exit", () => (anvilExited = true));
  cleanup.add("stop anvil", async () => {
    if (anvilExited || anvil.pid === undefined) return;
    try {
      process.kill(-anvil.pid, "SIGTERM");
    } catch {
      // gone
    }
    for (let i = 0; i < 50 && !anvilExited; i++) await sleep(100);
    if (!anvilExited) process.kill(-anvil.pid, "SIGKILL");
  });
  const rpc = async (url: string, body: string, headers: Record<string, string> = {}) => {
    const res = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body, signal: AbortSignal.timeout(5000) });
    return { status: res.status, text: await res.text() };
  };
  for (let i = 0; ; i++) {
    if (anvilExited) throw new Error("anvil exited at start");
    if ((await rpc(anvilUrl, METHODS.eth_blockNumber).catch(() => ({ status: 0, text: "" }))).status === 200) break;
    if (i > 300) throw new Error("anvil not ready in 30 s");
    await sleep(100);
  }
  log(`anvil on ${anvilUrl}`);

  // 2. Bare proxies, one per HTTP client.
  const work = await tempDir("blockgate-bench-node-");
  const cpuProf = values["cpu-prof"] ?? false;
  const profileDirs = { g: path.join(work, "profile-gateway"), u: path.join(work, "profile-proxy") };
  const profileArgs = (dir: string) => (cpuProf ? ["--cpu-prof", "--cpu-prof-dir", dir, "--cpu-prof-interval", "250"] : []);
  const startProxy = async (client: "http" | "undici") => {
    const port = await freePort();
    const service = spawnNode(`bare proxy (${client})`, [...(client === "undici" ? profileArgs(profileDirs.u) : []), "bench/node-proxy.mjs"], {
      cwd: root,
      echo: verbose,
      env: { PATH: process.env.PATH, NODE_ENV: "production", HOST: "127.0.0.1", PORT: String(port), UPSTREAM_URL: anvilUrl, CLIENT: client },
    });
    const url = `http://127.0.0.1:${port}/`;
    await waitUntilReady(service, async () => (await rpc(url, METHODS.eth_blockNumber)).status === 200, 30_000);
    return { service, url };
  };
  const proxy = await startProxy("http");
  const undiciProxy = await startProxy("undici");

  // 3. Gateway: throwaway PostgreSQL, ENTERPRISE project, server forwarding ethereum-mainnet to anvil.
  const pg = await throwawayDatabase("blockgate-bench-node-");
  const { appSecret } = pg;
  const undoDb = cleanup.add("disconnect from PostgreSQL", () => disconnectDb());
  const user = await createUser({ email: `bench-${Date.now()}@example.com`, password: secret() });
  const { projectId, apiKey } = await createProject(user.id, "Node bench");
  await db().project.update({ where: { id: projectId }, data: { plan: Plan.ENTERPRISE } });
  await disconnectDb();
  undoDb();
  const apiPort = await freePort();
  const api = spawnNode("gateway", [...profileArgs(profileDirs.g), "bin/start.mjs", "--api-only"], {
    cwd: root,
    echo: verbose,
    env: {
      ...process.env,
      DATABASE_URL: pg.url,
      PORT: String(apiPort),
      HOST: "127.0.0.1",
      NODE_ENV: "production",
      APP_SECRET: appSecret,
      NEXTAUTH_SECRET: secret(),
      DATA_DIR: path.join(work, "data"),
      DEVNETS: "off",
      UPSTREAM_ETHEREUM_MAINNET: anvilUrl,
    },
  });
  const apiUrl = `http://127.0.0.1:${apiPort}/node/ethereum-mainnet`;
  const keyHeaders = { "X-API-KEY": apiKey };
  log(`starting the gateway on port ${apiPort}…`);
  await waitUntilReady(api, async () => (await rpc(apiUrl, METHODS.eth_blockNumber, keyHeaders)).status === 200);

  // Same answers on every path (chain id and a block).
  const targets: Record<PathId, { url: string; headers: Record<string, string> }> = {
    d: { url: anvilUrl, headers: { "Content-Type": "application/json" } },
    p: { url: proxy.url, headers: { "Content-Type": "application/json" } },
    u: { url: undiciProxy.url, headers: { "Content-Type": "application/json" } },
    g: { url: apiUrl, headers: { "Content-Type": "application/json", ...keyHeaders } },
  };
  const onEvery = (body: string) => Promise.all(PATHS.map((p) => rpc(targets[p].url, body, targets[p].headers)));
  const ids = await onEvery(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }));
  const sizes = await onEvery(METHODS["eth_getBlockByNumber(latest,false)"]);
  log(`eth_chainId: ${PATHS.map((p, i) => `${LABEL[p]} ${ids[i]!.text}`).join(", ")}; latest block body ${sizes.map((s) => s.text.length).join(" / ")} B`);
  // The gateway answers eth_chainId from its catalog (0x1 for ethereum-mainnet), so compare the genesis block's hash instead.
  const genesis = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: ["0x0", false] });
  const hashes = (await onEvery(genesis)).map((x) => (JSON.parse(x.text) as { result?: { hash?: string } }).result?.hash);
  if (!hashes[0] || hashes.some((h) => h !== hashes[0])) throw new Error(`the paths do not reach the same anvil: genesis hashes ${hashes.join(", ")}`);

  const gwPid = workerPid(api.pid);
  const proxyPids = [workerPid(proxy.service.pid), workerPid(undiciProxy.service.pid)];
  const memBefore = memoryOf(gwPid);
  const rows: Row[] = [];
  /** When the gateway and the undici proxy were under measured load, and how many requests they answered then (for the profiles). */
  const profiledLoad: Record<"g" | "u", Array<{ window: [number, number]; requests: number }>> = { g: [], u: [] };
  for (const method of measuredMethods) {
    for (const c of connections) {
      const group = paths.map((p) => ({ method, path: p, connections: c, runs: [] as Run[] }));
      rows.push(...group);
      for (let round = 1; round <= rounds; round++) {
        for (const row of group) {
          const p = row.path;
          const load = (durationSec: number) => runLoad({ url: targets[p].url, method: "POST", headers: targets[p].headers, body: METHODS[method], connections: c, durationSec });
          if (warmupSec > 0) await load(warmupSec);
          const stopCpu = startCpuAccounting({ anvil: () => (anvil.pid ? [anvil.pid] : []), proxy: () => proxyPids, gateway: () => [...new Set([api.pid, gwPid])], bench: () => [process.pid] });
          const from = monotonicUs();
          const r = await load(durationSec);
          if (p === "g" || p === "u") profiledLoad[p].push({ window: [from, monotonicUs()], requests: r.requests });
          const cpu = stopCpu();
          row.runs.push({ r, cores: cpu ? { ...cpu.groups, others: cpu.otherCores } : undefined });
          log(
            `${method} ${LABEL[p]} c=${c}${rounds > 1 ? ` round ${round}/${rounds}` : ""}: ${fmt.rps(r.rps)} req/s, p50 ${fmt.ms(r.latency.p50)} ms, p99 ${fmt.ms(r.latency.p99)} ms` +
              (cpu ? `, cores anvil ${fmt.cores(cpu.groups.anvil)} proxy ${fmt.cores(cpu.groups.proxy)} gateway ${fmt.cores(cpu.groups.gateway)} bench ${fmt.cores(cpu.groups.bench)} others ${fmt.cores(cpu.otherCores)}` : "") +
              (r.non2xx + r.errors > 0 ? `, ${r.non2xx} non-2xx ${r.errors} errors ${JSON.stringify(r.statusCodes)}` : ""),
          );
        }
      }
    }
  }
  const memAfter = memoryOf(gwPid);
  const died = [api, proxy.service, undiciProxy.service].filter((s) => s.exited()).map((s) => s.name);
  if (anvilExited) died.push("anvil");
  await api.stop();
  await proxy.service.stop();
  await undiciProxy.service.stop();
  if (cpuProf) for (const p of ["u", "g"] as const) if (paths.includes(p)) printProfile(p, profileDirs[p], profiledLoad[p], root);

  const rps = (row: Row) => row.runs.map((x) => x.r.rps);
  const p50s = (row: Row) => row.runs.map((x) => x.r.latency.p50);
  const table = markdownTable(
    ["method", "path", "c", rounds > 1 ? `req/s: median (min–max of ${rounds})` : "req/s", "p50 ms", "p99 ms", "mean ms", "cores: anvil / proxies / gateway / bench / others", "CPU µs/req", "requests", "non-2xx", "errors"],
    rows.map((row) => {
      const mid = (f: (run: Run) => number | undefined) => median(row.runs.map((x) => f(x) ?? NaN));
      const sum = (f: (r: LoadResult) => number) => row.runs.reduce((a, x) => a + f(x.r), 0);
      const hasCores = row.runs.every((x) => x.cores);
      return [
        row.method,
        LABEL[row.path],
        String(row.connections),
        spread(rps(row), fmt.rps),
        spread(p50s(row), fmt.ms),
        fmt.ms(mid((x) => x.r.latency.p99)),
        fmt.ms(mid((x) => x.r.latency.mean)),
        hasCores ? (["anvil", "proxy", "gateway", "bench", "others"] as const).map((k) => fmt.cores(mid((x) => x.cores?.[k]))).join(" / ") : "n/a",
        hasCores ? spread(row.runs.map((x) => cpuPerRequest(row.path, x)), (v) => v.toFixed(0)) : "n/a",
        sum((r) => r.requests).toLocaleString("en-US"),
        String(sum((r) => r.non2xx)),
        String(sum((r) => r.errors)),
      ];
    }),
  );
  const find = (m: MethodName, p: PathId, c: number) => rows.find((x) => x.method === m && x.path === p && x.connections === c);
  const verdicts: string[][] = [];
  let allPass = true;
  for (const m of measuredMethods) {
    for (const c of connections) {
      const g = find(m, "g", c);
      // The faster bare proxy (by median throughput) is the floor the gateway is held to.
      const best = PROXIES.map((p) => find(m, p, c))
        .filter((x): x is Row => x !== undefined)
        .sort((a, b) => median(rps(b)) - median(rps(a)))[0];
      if (!g || !best) continue;
      const ratio = median(rps(g)) / median(rps(best));
      const failed = g.runs.reduce((a, x) => a + x.r.non2xx + x.r.errors, 0);
      const name = LABEL[best.path].slice(0, 3);
      if (c >= MIN_THROUGHPUT_CONNECTIONS) {
        const ok = ratio >= TARGET_RATIO && failed === 0;
        allPass &&= ok;
        verdicts.push([m, `throughput (g)/${name} at c=${c} ≥ ${TARGET_RATIO} (median req/s)`, fmt.ratio(ratio), ok ? "PASS" : "FAIL"]);
      } else {
        // One request at a time: req/s is 1 / latency, which the p50 target below holds.
        verdicts.push([m, `throughput (g)/${name} at c=${c} (latency-bound; held by the p50 target)`, fmt.ratio(ratio), failed === 0 ? "info" : "FAIL"]);
        allPass &&= failed === 0;
      }
      if (c === 1) {
        const added = median(p50s(g)) - median(p50s(best));
        const ok1 = added < TARGET_ADDED_P50_MS;
        allPass &&= ok1;
        verdicts.push([m, `p50 added by (g) over ${name} at c=1 < ${TARGET_ADDED_P50_MS} ms (median p50)`, `${fmt.ms(added)} ms`, ok1 ? "PASS" : "FAIL"]);
      }
    }
  }
  const section = [
    `## node — ${started.toISOString()}`,
    "",
    `Machine: ${machineInfo()}. Code: ${version}.`,
    "",
    `Run: \`npm run bench -- node${argv.length ? ` ${argv.join(" ")}` : ""}\`: ${durationSec} s measured after ${warmupSec} s warm-up per row, autocannon in the bench process (pipelining 1, keep-alive)${rounds > 1 ? `, ${rounds} rounds per row with the paths taken in turn (median and min–max shown)` : ""}, ` +
      `all on this machine (anvil, proxy, gateway, PostgreSQL and the load generator share its cores). ` +
      `Paths to one anvil (\`--chain-id 1 --block-time 2\`): (d) straight to anvil; (p) and (u) bench/node-proxy.mjs, a bare node:http server forwarding with http.request and a keep-alive agent (p) or with an undici Pool (u); ` +
      `(g) the gateway (bin/start.mjs --api-only, production, ENTERPRISE key, \`UPSTREAM_ETHEREUM_MAINNET\` = anvil). ` +
      `**eth_blockNumber is answered by the gateway from its head cache** (250 ms for an upstream network; lib/evm/node-endpoint.ts), so (g) mostly does not reach anvil for it while (p) always does: that row compares a cache with a proxy. eth_getBlockByNumber("latest", false) is forwarded every time: the proxies send each request to anvil alone, the gateway sends the single calls that reach it in one turn of its event loop as one JSON-RPC batch (\`UPSTREAM_BATCH_MAX\`, default 50; lib/evm/upstream.ts) and passes anvil's answers on without parsing them.`,
    "",
    table,
    "",
    markdownTable(["method", "target", "measured", "verdict"], verdicts),
    "",
    `Gateway RSS: ${fmt.mib(memBefore?.rssMiB)} before the load, ${fmt.mib(memAfter?.rssMiB)} after (peak ${fmt.mib(memAfter?.hwmMiB)}).` + (died.length ? ` Exited during the run: ${died.join(", ")}.` : ""),
  ].join("\n");
  console.log(section);
  if (cpuProf) console.log("\n(profiled run: bench/RESULTS.md not written)");
  else if (!values["dry-run"]) {
    await prependResultsSection(section);
    log("written to bench/RESULTS.md");
  }
  return died.length ? 1 : allPass ? 0 : 2;
}

/** Where the main thread of the gateway or the undici proxy spent its CPU time while under measured load, per request. */
function printProfile(p: "g" | "u", dir: string, load: Array<{ window: [number, number]; requests: number }>, root: string): void {
  const file = existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith(".cpuprofile")) : undefined;
  if (!file) {
    console.error(`No CPU profile was written in ${dir}.`);
    return;
  }
  // Kept after the run (the temp dir goes): open it in Chrome DevTools or speedscope.
  const kept = path.join(os.tmpdir(), `blockgate-bench-node-${p === "g" ? "gateway" : "proxy"}-${Date.now()}.cpuprofile`);
  copyFileSync(path.join(dir, file), kept);
  const summary = summarizeCpuProfile(kept, root, load.map((l) => l.window));
  const requests = load.reduce((a, l) => a + l.requests, 0);
  const us = (ms: number) => (requests > 0 ? ((ms * 1000) / requests).toFixed(1) : "n/a");
  console.log(`\nCPU profile of ${LABEL[p]}: ${kept}; main thread ${us(summary.totalMs - summary.idleMs)} µs per request under load (sampled every 250 µs; profiling adds overhead).`);
  console.log(markdownTable(["origin", "self µs/req"], summary.origins.slice(0, 12).map((o) => [o.origin, us(o.selfMs)])));
  console.log(markdownTable(["function", "self µs/req", "total µs/req"], summary.functions.slice(0, 25).map((f) => [f.name, us(f.selfMs), us(f.totalMs)])));
  if (p === "g")
    console.log(
    markdownTable(
      ["project function", "total µs/req", "self µs/req"],
      summary.functions
        .filter(isProjectFunction)
        .sort((a, b) => b.totalMs - a.totalMs)
        .slice(0, 25)
        .map((f) => [f.name, us(f.totalMs), us(f.selfMs)]),
    ),
  );
}
