/**
 * `npm run bench -- consensus`: the consensus-chain index at scale.
 *
 *   1. Ingestion: a throwaway PostgreSQL, then `generateBlocks` (the devnet's bulk loader, the
 *      same insertBlocks path as live ingestion) for babylon-mainnet: N blocks × M txs
 *      (default 100,000 × 10 = 1,000,000 txs). Reports tx/s.
 *   2. Queries: the real server (`bin/start.mjs --api-only`, production) with an ENTERPRISE key;
 *      sequential GET /rpc/babylon-mainnet/tx_search (and block_search), page 1, per_page=100,
 *      with values read from the DB. p50/p99 per query, server RSS before/after.
 *   3. For a query over its target: EXPLAIN (ANALYZE, BUFFERS) of the count and page SQL, compiled
 *      exactly as lib/consensus/handlers.ts does (parse.ts + sql.ts), on the public pool (the
 *      planner settings searches run with).
 * Targets: ingestion > 5,000 tx/s; every query p50 < 20 ms and p99 < 100 ms.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { createUser } from "@/lib/auth/users";
import { SEARCH_SQL } from "@/lib/consensus/handlers";
import { parseQuery } from "@/lib/consensus/query/parse";
import { compileBlockQuery, compileTxCount, compileTxQuery } from "@/lib/consensus/query/sql";
import { generateBlocks } from "@/lib/consensus/devnet/producer";
import { db, disconnectDb, publicDb } from "@/lib/db/client";
import { Plan } from "@/lib/db/generated/enums";
import { networkBySlug } from "@/lib/networks";
import { createProject } from "@/lib/projects/service";
import { freePort } from "@/lib/testing/ports";
import { cleanup, tempDir } from "./cleanup";
import { spawnNode, waitUntilReady, workerPid } from "./processes";
import { machineInfo, memoryOf } from "./resources";
import { percentile } from "./load";
import { codeVersion, fmt, markdownTable, prependResultsSection } from "./results";
import { wholeNumberOption } from "./options";
import { secret, throwawayDatabase } from "./database";

const USAGE = `Usage: npm run bench -- consensus [options]
  --blocks N          blocks to load (default 100000, the target size: about 3 min of ingestion on 2 cores)
  --txs-per-block M   transactions per block (default 10)
  --batch B           blocks per insertBlocks call (default 500)
  --requests R        measured sequential requests per query (default 200, after 20 warm-up)
  --dry-run           print the results without writing bench/RESULTS.md
  --verbose           echo the server's output`;

const NETWORK = "babylon-mainnet";
const TARGET_P50 = 20;
const TARGET_P99 = 100;
const TARGET_TX_S = 5000;
const WARMUP = 20;

const log = (msg: string) => console.error(`[bench] ${msg}`);

interface QueryCase {
  name: string;
  method: "tx_search" | "block_search";
  query: string;
  order?: "asc" | "desc";
}

interface QueryRow {
  c: QueryCase;
  p50: number;
  p99: number;
  mean: number;
  max: number;
  total: string;
  returned: number;
  errors: number;
  /** The server's RSS right after the query's requests, MiB. */
  rssAfter: number | undefined;
}

export async function consensusBench(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      blocks: { type: "string" },
      "txs-per-block": { type: "string" },
      batch: { type: "string" },
      requests: { type: "string" },
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
  const int = wholeNumberOption(USAGE);
  const blocks = int(values.blocks, 100_000, "blocks");
  const txsPerBlock = int(values["txs-per-block"], 10, "txs-per-block");
  const batch = int(values.batch, 500, "batch");
  const requests = int(values.requests, 200, "requests");
  const root = process.cwd();
  const started = new Date();
  const version = codeVersion(["lib/consensus", "lib/db", "prisma/migrations"], root);
  const network = networkBySlug(NETWORK);
  if (!network) throw new Error(`no network ${NETWORK}`);

  // 1. Throwaway PostgreSQL.
  const work = await tempDir("blockgate-bench-cons-");
  const pg = await throwawayDatabase("blockgate-bench-cons-");
  const { appSecret } = pg;
  cleanup.add("disconnect from PostgreSQL", () => disconnectDb());

  // 2. Ingestion.
  const totalTxs = blocks * txsPerBlock;
  log(`loading ${blocks.toLocaleString("en-US")} blocks × ${txsPerBlock} txs (batch ${batch})…`);
  const t0 = performance.now();
  let lastLog = t0;
  await generateBlocks(network, blocks, txsPerBlock, {
    batch,
    onProgress: (done) => {
      const now = performance.now();
      if (now - lastLog > 10_000 || done === blocks) {
        lastLog = now;
        const s = (now - t0) / 1000;
        log(`  ${done.toLocaleString("en-US")} blocks, ${(done * txsPerBlock).toLocaleString("en-US")} txs in ${s.toFixed(1)} s: ${Math.round((done * txsPerBlock) / s).toLocaleString("en-US")} tx/s`);
      }
    },
  });
  const ingestSec = (performance.now() - t0) / 1000;
  const txPerSec = totalTxs / ingestSec;
  const counts = (
    await db().$queryRawUnsafe<Array<{ txs: bigint; attrs: bigint; blocks: bigint }>>(
      `SELECT (SELECT count(*) FROM consensus_txs) AS txs, (SELECT count(*) FROM consensus_tx_attrs) AS attrs, (SELECT count(*) FROM consensus_blocks) AS blocks`,
    )
  )[0]!;
  const dbSize = (await db().$queryRawUnsafe<Array<{ s: string }>>(`SELECT pg_size_pretty(pg_database_size(current_database())) AS s`))[0]!.s;
  log(`ingested ${totalTxs.toLocaleString("en-US")} txs in ${ingestSec.toFixed(1)} s = ${Math.round(txPerSec).toLocaleString("en-US")} tx/s (${counts.attrs} attribute rows, DB ${dbSize})`);
  // What autovacuum does to a table after a bulk load, done now: queries then find the visibility
  // map set (index-only counts) and a settled database (no autovacuum running during the queries).
  log("VACUUM ANALYZE…");
  const v0 = performance.now();
  await db().$executeRawUnsafe("VACUUM ANALYZE");
  const vacuumSec = (performance.now() - v0) / 1000;

  // 3. Real values from the DB.
  const mid = BigInt(Math.floor(blocks / 2));
  const hashRow = (await db().$queryRawUnsafe<Array<{ hash: string }>>(`SELECT hash FROM consensus_txs WHERE network = $1 AND height = $2 ORDER BY tx_index LIMIT 1`, NETWORK, mid))[0];
  const senderRow = (
    await db().$queryRawUnsafe<Array<{ value: string }>>(`SELECT value FROM consensus_tx_attrs WHERE network = $1 AND key = 'transfer.sender' AND height >= $2 ORDER BY height LIMIT 1`, NETWORK, mid)
  )[0];
  if (!hashRow || !senderRow) throw new Error("no tx or sender found in the middle of the chain");
  const lo = mid - 500n;
  const hi = mid + 500n;
  const cases: QueryCase[] = [
    { name: "tx.hash", method: "tx_search", query: `tx.hash='${hashRow.hash}'` },
    { name: "tx.height", method: "tx_search", query: `tx.height=${mid}` },
    { name: "transfer.sender desc", method: "tx_search", query: `transfer.sender='${senderRow.value}'`, order: "desc" },
    { name: "height range + amount", method: "tx_search", query: `tx.height>${lo} AND tx.height<${hi} AND transfer.amount>100` },
    { name: "block.height >", method: "block_search", query: `block.height>${mid}` },
    { name: "CONTAINS", method: "tx_search", query: `message.action CONTAINS 'deleg'` },
  ];

  // 4. Project and key.
  const user = await createUser({ email: `bench-${Date.now()}@example.com`, password: secret() });
  const { projectId, apiKey } = await createProject(user.id, "Consensus bench");
  await db().project.update({ where: { id: projectId }, data: { plan: Plan.ENTERPRISE } });

  // 5. The server.
  const apiPort = await freePort();
  const api = spawnNode("server", ["bin/start.mjs", "--api-only"], {
    cwd: root,
    echo: values.verbose ?? false,
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
    },
  });
  const base = `http://127.0.0.1:${apiPort}/rpc/${NETWORK}`;
  const headers = { "X-API-KEY": apiKey };
  const urlOf = (c: QueryCase) => {
    const q = new URLSearchParams({ query: `"${c.query}"`, page: "1", per_page: "100" });
    if (c.order) q.set("order_by", `"${c.order}"`);
    return `${base}/${c.method}?${q.toString()}`;
  };
  log(`starting the server on port ${apiPort}…`);
  await waitUntilReady(api, async () => (await fetch(`${base}/status`, { headers, signal: AbortSignal.timeout(5000) })).status === 200);
  const serverPid = workerPid(api.pid);
  const memBefore = memoryOf(serverPid);

  // 6. Sequential requests.
  const rows: QueryRow[] = [];
  for (const c of cases) {
    const url = urlOf(c);
    const lat: number[] = [];
    let errors = 0;
    let total = "?";
    let returned = 0;
    for (let i = 0; i < WARMUP + requests; i++) {
      const s = performance.now();
      const res = await fetch(url, { headers, signal: AbortSignal.timeout(60_000) });
      const text = await res.text();
      const ms = performance.now() - s;
      if (res.status !== 200) {
        errors++;
        if (errors === 1) log(`${c.name}: HTTP ${res.status} ${text.slice(0, 300)}`);
        continue;
      }
      if (i === 0) {
        const body = JSON.parse(text) as { result?: { total_count?: unknown; txs?: unknown[]; blocks?: unknown[] }; error?: unknown };
        if (!body.result) {
          log(`${c.name}: ${text.slice(0, 300)}`);
          errors++;
        }
        total = String(body.result?.total_count ?? "?");
        returned = (body.result?.txs ?? body.result?.blocks ?? []).length;
      }
      if (i >= WARMUP) lat.push(ms);
    }
    const sorted = Float64Array.from(lat).sort();
    const row: QueryRow = {
      c,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      mean: lat.reduce((a, b) => a + b, 0) / Math.max(1, lat.length),
      max: sorted[sorted.length - 1] ?? NaN,
      total,
      returned,
      errors,
      rssAfter: memoryOf(serverPid)?.rssMiB,
    };
    rows.push(row);
    log(`${c.name}: p50 ${fmt.ms(row.p50)} ms, p99 ${fmt.ms(row.p99)} ms, max ${fmt.ms(row.max)} ms, total_count ${total}, returned ${returned}${errors ? `, ${errors} errors` : ""}`);
  }
  const memAfter = memoryOf(serverPid);
  const died = api.exited();
  await api.stop();

  // 7. EXPLAIN for the misses.
  const explains: string[] = [];
  for (const row of rows) {
    if (row.p50 < TARGET_P50 && row.p99 < TARGET_P99 && row.errors === 0) continue;
    const parsed = parseQuery(row.c.query);
    if (!parsed.ok) continue;
    const params: unknown[] = [NETWORK];
    const statements: Array<[string, string, unknown[]]> = [];
    let countSql: string;
    let pageSql: string;
    if (row.c.method === "tx_search") {
      const where = compileTxQuery(parsed.query, params);
      const dir = row.c.order === "desc" ? "DESC" : "ASC";
      const counterParams: unknown[] = [NETWORK];
      const counters = compileTxCount(parsed.query, counterParams);
      if (counters) statements.push(["count from the counters", counters, counterParams]);
      countSql = SEARCH_SQL.txCount(where);
      pageSql = SEARCH_SQL.txPage(where, dir, 100, 0);
    } else {
      const where = compileBlockQuery(parsed.query, params);
      const dir = row.c.order === "asc" ? "ASC" : "DESC";
      countSql = SEARCH_SQL.blockCount(where);
      pageSql = SEARCH_SQL.blockPage(where, dir, 100, 0);
    }
    statements.push([statements.length ? "count (when the counters cannot tell)" : "count", countSql, params], ["page", pageSql, params]);
    for (const [label, sql, args] of statements) {
      const plan = await publicDb().$queryRawUnsafe<Array<{ "QUERY PLAN": string }>>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, ...args);
      const text = plan.map((p) => p["QUERY PLAN"]).join("\n");
      explains.push(`#### ${row.c.name}: ${label}\n\n\`\`\`sql\n${sql}\n-- params: ${JSON.stringify(args)}\n\`\`\`\n\n\`\`\`\n${text}\n\`\`\``);
      log(`EXPLAIN ${row.c.name} (${label}):\n${sql}\n${text}`);
    }
  }
  await disconnectDb();

  // 8. Report.
  const table = markdownTable(
    ["query", "method", "p50 ms", "p99 ms", "mean ms", "max ms", "total_count", "returned", "errors", "server RSS after", "verdict"],
    rows.map((r) => [
      `\`${r.c.query}\`${r.c.order ? ` order_by=${r.c.order}` : ""}`,
      r.c.method,
      fmt.ms(r.p50),
      fmt.ms(r.p99),
      fmt.ms(r.mean),
      fmt.ms(r.max),
      r.total,
      String(r.returned),
      String(r.errors),
      fmt.mib(r.rssAfter),
      r.errors === 0 && r.p50 < TARGET_P50 && r.p99 < TARGET_P99 ? "PASS" : "FAIL",
    ]),
  );
  const ingestPass = txPerSec > TARGET_TX_S;
  const full = blocks === 100_000 && txsPerBlock === 10;
  const section = [
    `## consensus — ${started.toISOString()}`,
    "",
    `Machine: ${machineInfo()}. Code: ${version}.`,
    "",
    `Run: \`npm run bench -- consensus${argv.length ? ` ${argv.join(" ")}` : ""}\`: ${blocks.toLocaleString("en-US")} blocks × ${txsPerBlock} txs = ${totalTxs.toLocaleString("en-US")} txs` +
      (full ? " (the full target size)." : " (NOT the full 100,000 × 10 target size; see the note below)."),
    "",
    `Ingestion (\`generateBlocks\`, batch ${batch} blocks per insertBlocks call): ${totalTxs.toLocaleString("en-US")} txs in ${ingestSec.toFixed(1)} s = **${Math.round(txPerSec).toLocaleString("en-US")} tx/s** ` +
      `(target > ${TARGET_TX_S.toLocaleString("en-US")} tx/s: **${ingestPass ? "PASS" : "FAIL"}**). Rows: ${counts.blocks} blocks, ${counts.txs} txs, ${counts.attrs} tx attributes; database ${dbSize}.` +
      (full ? "" : ` Extrapolated to 1,000,000 txs at this rate: ${((1_000_000 / txPerSec) / 60).toFixed(1)} min (an extrapolation: index maintenance cost grows with table size).`),
    "",
    `Then \`VACUUM ANALYZE\` (${vacuumSec.toFixed(1)} s; what autovacuum does after a bulk load, so the queries run on a settled database).`,
    "",
    `Queries: \`GET /rpc/${NETWORK}/<method>?query=…&page=1&per_page=100\` through the real server (bin/start.mjs --api-only, production, ENTERPRISE key), sequential, ${WARMUP} warm-up + ${requests} measured each; latency measured by the client (fetch, keep-alive). Targets: p50 < ${TARGET_P50} ms and p99 < ${TARGET_P99} ms.`,
    "",
    table,
    "",
    `Server RSS: before the queries ${fmt.mib(memBefore?.rssMiB)}, after ${fmt.mib(memAfter?.rssMiB)} (peak ${fmt.mib(memAfter?.hwmMiB)}). ` +
      "A request holds at most one page (per_page ≤ 100 rows) whatever the number of matches: counts are made in PostgreSQL (or read from the counters), so the RSS after each query follows the size of the rows returned (100 whole blocks for block_search), not total_count." +
      (died ? " The server exited during the run." : ""),
    ...(explains.length ? ["", "### Plans of the queries over target (EXPLAIN (ANALYZE, BUFFERS), SQL compiled as handlers.ts does)", "", ...explains.flatMap((e) => [e, ""])] : []),
  ].join("\n");
  console.log(section);
  if (!values["dry-run"]) {
    await prependResultsSection(section);
    log("written to bench/RESULTS.md");
  }
  const allPass = ingestPass && rows.every((r) => r.errors === 0 && r.p50 < TARGET_P50 && r.p99 < TARGET_P99);
  return died ? 1 : allPass ? 0 : 2;
}
