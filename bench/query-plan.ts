/**
 * `npm run bench -- query-plan`: what PostgreSQL spends planning (and running) a consensus search
 * as its condition count grows.
 *
 *   1. A throwaway PostgreSQL with a devnet-sized index: `generateBlocks` for babylon-mainnet
 *      (default 2,000 blocks × 6 txs), then VACUUM ANALYZE.
 *   2. tx_search and block_search queries of 1, 5 and 10 distinct conditions (and one of 64
 *      repeated conditions), with real values read from the index, compiled as
 *      lib/consensus/handlers.ts does (parse.ts, sql.ts, SEARCH_SQL) into its count and page
 *      statements (page 1, per_page 100).
 *   3. EXPLAIN (ANALYZE, SUMMARY) of each statement, repeated, on two clients: the main pool
 *      (PostgreSQL's default planner settings) and the public pool (publicDb(), the one searches
 *      run on, with PUBLIC_PLANNER_SETTINGS). Median planning and execution time per statement.
 */
import { parseArgs } from "node:util";
import { SEARCH_SQL } from "@/lib/consensus/handlers";
import { parseQuery } from "@/lib/consensus/query/parse";
import { compileBlockQuery, compileTxQuery } from "@/lib/consensus/query/sql";
import { generateBlocks } from "@/lib/consensus/devnet/producer";
import { db, disconnectDb, publicDb, PUBLIC_PLANNER_SETTINGS } from "@/lib/db/client";
import { setDatabaseUrl } from "@/lib/env";
import { networkBySlug } from "@/lib/networks";
import { cleanup } from "./cleanup";
import { throwawayDatabase } from "./database";
import { percentile } from "./load";
import { machineInfo } from "./resources";
import { wholeNumberOption } from "./options";
import { codeVersion, fmt, markdownTable, prependResultsSection } from "./results";

const USAGE = `Usage: npm run bench -- query-plan [options]
  --blocks N          blocks to load (default 2000)
  --txs-per-block M   transactions per block (default 6)
  --repeat R          measured EXPLAIN runs per statement and client (default 30, after 5 warm-up)
  --note TEXT         a line added under the results (what changed since the last run)
  --dry-run           print the results without writing bench/RESULTS.md`;

const NETWORK = "babylon-mainnet";
const WARMUP = 5;
const log = (msg: string) => console.error(`[bench] ${msg}`);

interface Case {
  method: "tx_search" | "block_search";
  query: string;
}

interface Timing {
  planning: number;
  execution: number;
}

type Client = ReturnType<typeof db>;

/** Median planning and execution time of `sql`, from EXPLAIN (ANALYZE, SUMMARY, FORMAT JSON). */
async function explain(client: Client, sql: string, params: unknown[], repeat: number): Promise<Timing> {
  const planning: number[] = [];
  const execution: number[] = [];
  for (let i = 0; i < WARMUP + repeat; i++) {
    const [row] = await client.$queryRawUnsafe<Array<{ "QUERY PLAN": unknown }>>(`EXPLAIN (ANALYZE, SUMMARY, FORMAT JSON) ${sql}`, ...params);
    const raw = row?.["QUERY PLAN"];
    const plan = (typeof raw === "string" ? JSON.parse(raw) : raw) as Array<{ "Planning Time": number; "Execution Time": number }>;
    if (i < WARMUP) continue;
    planning.push(plan[0]!["Planning Time"]);
    execution.push(plan[0]!["Execution Time"]);
  }
  const median = (v: number[]) => percentile(Float64Array.from(v).sort(), 50);
  return { planning: median(planning), execution: median(execution) };
}

export async function queryPlanBench(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      blocks: { type: "string" },
      "txs-per-block": { type: "string" },
      repeat: { type: "string" },
      note: { type: "string" },
      "dry-run": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const int = wholeNumberOption(USAGE);
  const blocks = int(values.blocks, 2000, "blocks");
  const txsPerBlock = int(values["txs-per-block"], 6, "txs-per-block");
  const repeat = int(values.repeat, 30, "repeat");
  const started = new Date();
  const version = codeVersion(["lib/consensus/query", "lib/consensus/handlers.ts", "lib/db/client.ts"]);
  const { url } = await throwawayDatabase("blockgate-bench-plan-");
  setDatabaseUrl(url);
  const network = networkBySlug(NETWORK);
  if (!network) throw new Error(`no network ${NETWORK}`);
  cleanup.add("disconnect from PostgreSQL", () => disconnectDb());
  log(`loading ${blocks} blocks × ${txsPerBlock} txs…`);
  await generateBlocks(network, blocks, txsPerBlock);
  await db().$executeRawUnsafe("VACUUM ANALYZE");

  const one = async (sql: string, ...params: unknown[]) => (await db().$queryRawUnsafe<Array<{ v: string }>>(sql, ...params))[0]?.v;
  const mid = Math.floor(blocks / 2);
  const sender = await one(`SELECT value AS v FROM consensus_tx_attrs WHERE network = $1 AND key = 'transfer.sender' AND height >= $2 ORDER BY height LIMIT 1`, NETWORK, mid);
  const proposer = await one(`SELECT value AS v FROM consensus_block_attrs WHERE network = $1 AND key = 'proposer.address' AND height >= $2 ORDER BY height LIMIT 1`, NETWORK, mid);
  if (!sender || !proposer) throw new Error("no transfer.sender or proposer.address in the index");
  const lo = mid - 200;
  const hi = mid + 200;
  // Written least selective first, so the compiler's own order is what the plans show.
  const cases: Case[] = [
    { method: "tx_search", query: `transfer.sender = '${sender}'` },
    { method: "tx_search", query: `message.action EXISTS AND transfer.recipient CONTAINS 'bbn' AND transfer.amount > 100 AND tx.height > ${lo} AND transfer.sender = '${sender}'` },
    {
      method: "tx_search",
      query:
        `message.action EXISTS AND tx.fee EXISTS AND message.sender CONTAINS 'bbn' AND transfer.recipient CONTAINS 'bbn' AND transfer.amount > 100 ` +
        `AND transfer.amount < 999999 AND message.action = 'send' AND tx.height > ${lo} AND tx.height < ${hi} AND transfer.sender = '${sender}'`,
    },
    { method: "tx_search", query: Array.from({ length: 64 }, () => "a=1").join(" AND ") },
    { method: "block_search", query: `proposer.address = '${proposer}'` },
    { method: "block_search", query: `mint.amount > 0 AND rewards.validator CONTAINS 'bbn' AND mint.inflation EXISTS AND block.height > ${lo} AND proposer.address = '${proposer}'` },
    {
      method: "block_search",
      query:
        `mint.amount > 0 AND mint.amount < 99999999 AND rewards.validator EXISTS AND rewards.validator CONTAINS 'bbn' AND mint.inflation EXISTS ` +
        `AND checkpoint.epoch EXISTS AND checkpoint.epoch > 0 AND block.height > ${lo} AND block.height < ${hi} AND proposer.address = '${proposer}'`,
    },
  ];
  const clients: Array<[string, Client]> = [
    ["main pool (PostgreSQL defaults)", db()],
    [`public pool (${Object.entries(PUBLIC_PLANNER_SETTINGS).map(([k, v]) => `${k}=${v}`).join(", ")})`, publicDb()],
  ];

  const rows: string[][] = [];
  for (const c of cases) {
    const parsed = parseQuery(c.query);
    if (!parsed.ok) throw new Error(`${c.query}: ${parsed.error.message}`);
    const params: unknown[] = [NETWORK];
    const statements =
      c.method === "tx_search"
        ? ((where) => [SEARCH_SQL.txCount(where), SEARCH_SQL.txPage(where, "ASC", 100, 0)])(compileTxQuery(parsed.query, params))
        : ((where) => [SEARCH_SQL.blockCount(where), SEARCH_SQL.blockPage(where, "DESC", 100, 0)])(compileBlockQuery(parsed.query, params));
    const total = await db().$queryRawUnsafe<Array<{ n: bigint }>>(statements[0]!, ...params);
    const written = c.query.split(" AND ").length;
    for (const [label, client] of clients) {
      const [count, page] = [await explain(client, statements[0]!, params, repeat), await explain(client, statements[1]!, params, repeat)];
      log(`${c.method} ${parsed.query.conditions.length} conditions, ${label}: planning ${fmt.ms(count.planning)} / ${fmt.ms(page.planning)} ms, execution ${fmt.ms(count.execution)} / ${fmt.ms(page.execution)} ms`);
      rows.push([
        c.method,
        written === parsed.query.conditions.length ? String(written) : `${written} (${parsed.query.conditions.length} distinct)`,
        label,
        fmt.ms(count.planning),
        fmt.ms(page.planning),
        fmt.ms(count.execution),
        fmt.ms(page.execution),
        String(total[0]?.n ?? "?"),
      ]);
    }
  }
  await disconnectDb();

  const table = markdownTable(["method", "conditions", "client", "planning ms: count", "planning ms: page", "execution ms: count", "execution ms: page", "matches"], rows);
  const section = [
    `## query-plan — ${started.toISOString()}`,
    "",
    `Machine: ${machineInfo()}. Code: ${version}.`,
    "",
    `Run: \`npm run bench -- query-plan${argv.length ? ` ${argv.join(" ")}` : ""}\`: ${blocks.toLocaleString("en-US")} blocks × ${txsPerBlock} txs (babylon-mainnet devnet data), VACUUM ANALYZE, ` +
      `then EXPLAIN (ANALYZE, SUMMARY) of each search's count and page statements (page 1, per_page 100), compiled as handlers.ts does; median of ${repeat} runs after ${WARMUP} warm-up. ` +
      "Queries (the tx_search and block_search rows, in this order):",
    "",
    ...cases.map((c) => `- ${c.method}: \`${c.query.length > 160 ? `${c.query.slice(0, 160)}…` : c.query}\``),
    "",
    table,
    ...(values.note ? ["", values.note] : []),
  ].join("\n");
  console.log(section);
  if (!values["dry-run"]) {
    await prependResultsSection(section);
    log("written to bench/RESULTS.md");
  }
  return 0;
}
