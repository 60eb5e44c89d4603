/**
 * `npm run bench -- node`: the EVM node path against a real upstream (anvil).
 *
 * Three paths to the same anvil (--chain-id 1 --block-time 2; chain 1 because the gateway checks that an upstream serves its network's chain):
 *   (d) direct: straight to anvil;
 *   (p) bare proxy: bench/node-proxy.mjs (node:http → http.request with a keep-alive agent);
 *   (g) gateway: the real server (bin/start.mjs --api-only, production, ENTERPRISE key) with
 *       UPSTREAM_ETHEREUM_MAINNET=<anvil>, POST /node/ethereum-mainnet.
 * Methods: eth_blockNumber (the gateway answers it from its head cache, 250 ms for an upstream
 * network, so most gateway requests do not reach anvil) and eth_getBlockByNumber("latest", false)
 * (forwarded every time). Each at c=1 and c=32: warm-up (discarded) then a measured autocannon run.
 * Targets: gateway throughput ≥ 0.7 × the bare proxy's; gateway p50 − proxy p50 < 0.3 ms at c=1.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { createUser } from "@/lib/auth/users";
import { db, disconnectDb } from "@/lib/db/client";
import { Plan } from "@/lib/db/generated/enums";
import { anvilBinary } from "@/lib/evm/devnet/anvil";
import { createProject } from "@/lib/projects/service";
import { freePort } from "@/lib/testing/ports";
import { cleanup, tempDir } from "./cleanup";
import { spawnNode, waitUntilReady, workerPid } from "./processes";
import { machineInfo, memoryOf, startCpuAccounting } from "./resources";
import { runLoad, type LoadResult } from "./load";
import { codeVersion, fmt, markdownTable, prependResultsSection } from "./results";
import { secret, throwawayDatabase } from "./database";

const USAGE = `Usage: npm run bench -- node [options]
  --duration S      measured seconds per run (default 8)
  --warmup S        warm-up seconds per run (default 2)
  --connections L   comma-separated concurrencies (default 1,32)
  --dry-run         print the results without writing bench/RESULTS.md
  --verbose         echo the servers' output`;

const TARGET_RATIO = 0.7;
const TARGET_ADDED_P50_MS = 0.3;
const log = (msg: string) => console.error(`[bench] ${msg}`);

type PathId = "d" | "p" | "g";
const PATHS: PathId[] = ["d", "p", "g"];
const LABEL: Record<PathId, string> = { d: "(d) anvil direct", p: "(p) bare proxy", g: "(g) gateway" };
const METHODS = {
  eth_blockNumber: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
  "eth_getBlockByNumber(latest,false)": JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: ["latest", false] }),
};
type MethodName = keyof typeof METHODS;

interface Row {
  method: MethodName;
  path: PathId;
  r: LoadResult;
  cores: Record<string, number | undefined> | undefined;
}

export async function nodeBench(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: "string" },
      warmup: { type: "string" },
      connections: { type: "string" },
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
  if (!Number.isInteger(durationSec) || durationSec < 1 || !Number.isInteger(warmupSec) || warmupSec < 0 || connections.some((c) => !Number.isInteger(c) || c < 1)) {
    throw new Error(USAGE);
  }
  const verbose = values.verbose ?? false;
  const root = process.cwd();
  const started = new Date();
  const version = codeVersion(["lib/server.ts", "lib/gateway", "lib/evm", "lib/keys", "lib/usage"], root);

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

  // 2. Bare proxy.
  const proxyPort = await freePort();
  const proxy = spawnNode("bare proxy", ["bench/node-proxy.mjs"], {
    cwd: root,
    echo: verbose,
    env: { PATH: process.env.PATH, NODE_ENV: "production", HOST: "127.0.0.1", PORT: String(proxyPort), UPSTREAM_URL: anvilUrl },
  });
  const proxyUrl = `http://127.0.0.1:${proxyPort}/`;
  await waitUntilReady(proxy, async () => (await rpc(proxyUrl, METHODS.eth_blockNumber)).status === 200, 30_000);

  // 3. Gateway: throwaway PostgreSQL, ENTERPRISE project, server forwarding ethereum-mainnet to anvil.
  const work = await tempDir("blockgate-bench-node-");
  const pg = await throwawayDatabase("blockgate-bench-node-");
  const { appSecret } = pg;
  const undoDb = cleanup.add("disconnect from PostgreSQL", () => disconnectDb());
  const user = await createUser({ email: `bench-${Date.now()}@example.com`, password: secret() });
  const { projectId, apiKey } = await createProject(user.id, "Node bench");
  await db().project.update({ where: { id: projectId }, data: { plan: Plan.ENTERPRISE } });
  await disconnectDb();
  undoDb();
  const apiPort = await freePort();
  const api = spawnNode("gateway", ["bin/start.mjs", "--api-only"], {
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

  // Same answers on all three paths (chain id and a block).
  const chainId = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
  const ids = await Promise.all([rpc(anvilUrl, chainId), rpc(proxyUrl, chainId), rpc(apiUrl, chainId, keyHeaders)]);
  const sizes = await Promise.all([rpc(anvilUrl, METHODS["eth_getBlockByNumber(latest,false)"]), rpc(proxyUrl, METHODS["eth_getBlockByNumber(latest,false)"]), rpc(apiUrl, METHODS["eth_getBlockByNumber(latest,false)"], keyHeaders)]);
  log(`eth_chainId: direct ${ids[0].text}, proxy ${ids[1].text}, gateway ${ids[2].text}; latest block body ${sizes.map((s) => s.text.length).join(" / ")} B`);
  // The gateway answers eth_chainId from its catalog (0x1 for ethereum-mainnet), so compare the genesis block's hash instead.
  const genesis = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: ["0x0", false] });
  const hashes = (await Promise.all([rpc(anvilUrl, genesis), rpc(proxyUrl, genesis), rpc(apiUrl, genesis, keyHeaders)])).map((x) => (JSON.parse(x.text) as { result?: { hash?: string } }).result?.hash);
  if (!hashes[0] || hashes.some((h) => h !== hashes[0])) throw new Error(`the three paths do not reach the same anvil: genesis hashes ${hashes.join(", ")}`);

  const targets: Record<PathId, { url: string; headers: Record<string, string> }> = {
    d: { url: anvilUrl, headers: { "Content-Type": "application/json" } },
    p: { url: proxyUrl, headers: { "Content-Type": "application/json" } },
    g: { url: apiUrl, headers: { "Content-Type": "application/json", ...keyHeaders } },
  };
  const gwPid = workerPid(api.pid);
  const proxyPid = workerPid(proxy.pid);
  const memBefore = memoryOf(gwPid);
  const rows: Row[] = [];
  for (const method of Object.keys(METHODS) as MethodName[]) {
    for (const c of connections) {
      for (const p of PATHS) {
        const load = (durationSec: number) => runLoad({ url: targets[p].url, method: "POST", headers: targets[p].headers, body: METHODS[method], connections: c, durationSec });
        if (warmupSec > 0) await load(warmupSec);
        const stopCpu = startCpuAccounting({ anvil: () => (anvil.pid ? [anvil.pid] : []), proxy: () => [proxyPid], gateway: () => [api.pid, gwPid], bench: () => [process.pid] });
        const r = await load(durationSec);
        const cpu = stopCpu();
        rows.push({ method, path: p, r, cores: cpu ? { ...cpu.groups, others: cpu.otherCores } : undefined });
        log(
          `${method} ${LABEL[p]} c=${c}: ${fmt.rps(r.rps)} req/s, p50 ${fmt.ms(r.latency.p50)} ms, p99 ${fmt.ms(r.latency.p99)} ms` +
            (cpu ? `, cores anvil ${fmt.cores(cpu.groups.anvil)} proxy ${fmt.cores(cpu.groups.proxy)} gateway ${fmt.cores(cpu.groups.gateway)} bench ${fmt.cores(cpu.groups.bench)} others ${fmt.cores(cpu.otherCores)}` : "") +
            (r.non2xx + r.errors > 0 ? `, ${r.non2xx} non-2xx ${r.errors} errors ${JSON.stringify(r.statusCodes)}` : ""),
        );
      }
    }
  }
  const memAfter = memoryOf(gwPid);
  const died = [api, proxy].filter((s) => s.exited()).map((s) => s.name);
  if (anvilExited) died.push("anvil");
  await api.stop();
  await proxy.stop();

  const table = markdownTable(
    ["method", "path", "c", "req/s", "p50 ms", "p99 ms", "mean ms", "cores: anvil / proxy / gateway / bench / others", "requests", "non-2xx", "errors"],
    rows.map(({ method, path: p, r, cores }) => [
      method,
      LABEL[p],
      String(r.connections),
      fmt.rps(r.rps),
      fmt.ms(r.latency.p50),
      fmt.ms(r.latency.p99),
      fmt.ms(r.latency.mean),
      cores ? [cores.anvil, cores.proxy, cores.gateway, cores.bench, cores.others].map(fmt.cores).join(" / ") : "n/a",
      r.requests.toLocaleString("en-US"),
      String(r.non2xx),
      String(r.errors),
    ]),
  );
  const find = (m: MethodName, p: PathId, c: number) => rows.find((x) => x.method === m && x.path === p && x.r.connections === c)?.r;
  const verdicts: string[][] = [];
  let allPass = true;
  for (const m of Object.keys(METHODS) as MethodName[]) {
    for (const c of connections) {
      const g = find(m, "g", c);
      const p = find(m, "p", c);
      if (!g || !p) continue;
      const ratio = g.rps / p.rps;
      const ok = ratio >= TARGET_RATIO && g.non2xx + g.errors === 0;
      allPass &&= ok;
      verdicts.push([m, `throughput (g)/(p) at c=${c} ≥ ${TARGET_RATIO}`, fmt.ratio(ratio), ok ? "PASS" : "FAIL"]);
      if (c === 1) {
        const added = g.latency.p50 - p.latency.p50;
        const ok1 = added < TARGET_ADDED_P50_MS;
        allPass &&= ok1;
        verdicts.push([m, `p50 added by (g) over (p) at c=1 < ${TARGET_ADDED_P50_MS} ms`, `${fmt.ms(added)} ms`, ok1 ? "PASS" : "FAIL"]);
      }
    }
  }
  const section = [
    `## node — ${started.toISOString()}`,
    "",
    `Machine: ${machineInfo()}. Code: ${version}.`,
    "",
    `Run: \`npm run bench -- node${argv.length ? ` ${argv.join(" ")}` : ""}\`: ${durationSec} s measured after ${warmupSec} s warm-up per row, autocannon in the bench process (pipelining 1, keep-alive), ` +
      `all on this machine (anvil, proxy, gateway, PostgreSQL and the load generator share its cores). ` +
      `Paths to one anvil (\`--chain-id 1 --block-time 2\`): (d) straight to anvil; (p) bench/node-proxy.mjs, a bare node:http proxy (http.request, keep-alive agent); ` +
      `(g) the gateway (bin/start.mjs --api-only, production, ENTERPRISE key, \`UPSTREAM_ETHEREUM_MAINNET\` = anvil). ` +
      `**eth_blockNumber is answered by the gateway from its head cache** (250 ms for an upstream network; lib/evm/node-endpoint.ts), so (g) mostly does not reach anvil for it while (p) always does: that row compares a cache with a proxy. eth_getBlockByNumber("latest", false) is forwarded every time.`,
    "",
    table,
    "",
    markdownTable(["method", "target", "measured", "verdict"], verdicts),
    "",
    `Gateway RSS: ${fmt.mib(memBefore?.rssMiB)} before the load, ${fmt.mib(memAfter?.rssMiB)} after (peak ${fmt.mib(memAfter?.hwmMiB)}).` + (died.length ? ` Exited during the run: ${died.join(", ")}.` : ""),
  ].join("\n");
  console.log(section);
  if (!values["dry-run"]) {
    await prependResultsSection(section);
    log("written to bench/RESULTS.md");
  }
  return died.length ? 1 : allPass ? 0 : 2;
}
