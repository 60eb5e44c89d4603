/**
 * `npm run bench -- retention`: the database's size over a devnet run with the retention worker
 * (lib/chains/retention.ts), compressed in time, against its growth without.
 *
 * For each devnet family (a consensus devnet, babylon-mainnet; an Aptos devnet, aptos-mainnet), in
 * a throwaway PostgreSQL: `--hours` of the devnet's blocks at its configured block time
 * (CONSENSUS_BLOCK_TIME_MS, APTOS_BLOCK_TIME_MS) with the live devnet's transactions (the bulk
 * loaders, with the producers' own mix per height), stored one retention interval at a time; after
 * each interval the retention pass runs as the worker runs it, and each table autovacuum would have
 * visited by then (its default threshold: 50 rows + 20 % of the table dead) is vacuumed, since
 * compressed time leaves autovacuum no time to run. A full day of blocks takes too long to store
 * here, so the run is scaled down by `--scale`: the blocks, the window (CONSENSUS_DEVNET_RETAIN_BLOCKS,
 * APTOS_DEVNET_KEEP_BLOCKS: set them to measure others) and the interval between passes
 * (RETENTION_INTERVAL_MS) are all divided by it, which keeps their ratios (how much of the window
 * a pass removes, the dead rows between vacuums), and the sizes are multiplied back.
 * Reported: the tables' size (pg_total_relation_size, indexes and TOAST included) at every
 * simulated hour with retention, the bytes a block takes (measured before the first pass removes
 * anything), and without retention that growth carried on for the whole run.
 * An EVM devnet's saved state (the row of devnet_states): a real anvil, scaled down the same way,
 * with a traffic generator's round in every block (token transfers and an Emitter ping: receipts
 * with logs), mined at once. With retention anvil keeps the transactions of EVM_DEVNET_RETAIN_BLOCKS
 * blocks and is restarted from its state trimmed to them once it holds twice as many blocks: the
 * largest state saved is the one just before, measured at that point, then trimmed. Without, every
 * block of the run.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { Client } from "pg";
import { encodeFunctionData, getContractAddress, type Address } from "viem";
import { aptosFamily } from "@/lib/aptos/family";
import { userTxCountFor } from "@/lib/aptos/devnet/chain";
import { generateAptosBlocks } from "@/lib/aptos/devnet/producer";
import type { IndexRetention } from "@/lib/chains/family";
import { applyRetention } from "@/lib/chains/retention";
import { consensusFamily } from "@/lib/consensus/family";
import { generateBlocks, txCountFor } from "@/lib/consensus/devnet/producer";
import { db, disconnectDb } from "@/lib/db/client";
import { applyMigrations } from "@/lib/db/migrate";
import { getEnv, setDatabaseUrl, type Env } from "@/lib/env";
import { startAnvil, trimState } from "@/lib/evm/devnet/anvil";
import { BlockgateToken, Emitter } from "@/lib/evm/devnet/contracts";
import { componentLogger } from "@/lib/log";
import { networkBySlug, type Network } from "@/lib/networks";
import { cleanup, tempDir } from "./cleanup";
import { throwawayDatabase } from "./database";
import { wholeNumberOption } from "./options";
import { machineInfo } from "./resources";
import { codeVersion, markdownTable, prependResultsSection } from "./results";

const USAGE = `Usage: npm run bench -- retention [options]
  --hours H      hours of devnet blocks (default 24)
  --scale K      blocks, windows and the interval between passes divided by K, sizes multiplied back (default 30)
  --only F       one family: consensus, aptos or evm (default: all)
  --dry-run      print the results without writing bench/RESULTS.md`;

const log = (msg: string) => console.error(`[bench] ${msg}`);
const MB = 1024 * 1024;

interface Family {
  name: string;
  network: Network;
  retention: IndexRetention;
  tables: string[];
  blockTimeMs: (env: Env) => number;
  /** The window's variable, and the environment with the window set. */
  windowVariable: "CONSENSUS_DEVNET_RETAIN_BLOCKS" | "APTOS_DEVNET_KEEP_BLOCKS";
  /** Stores the next `blocks` blocks of the devnet. */
  grow: (blocks: number) => Promise<void>;
}

const FAMILIES: Family[] = [
  {
    name: "consensus",
    network: networkBySlug("babylon-mainnet")!,
    retention: consensusFamily.retention!,
    tables: ["consensus_blocks", "consensus_txs", "consensus_tx_attrs", "consensus_block_attrs", "consensus_attr_keys", "consensus_attr_values"],
    blockTimeMs: (env) => env.CONSENSUS_BLOCK_TIME_MS,
    windowVariable: "CONSENSUS_DEVNET_RETAIN_BLOCKS",
    grow: (blocks) => generateBlocks(networkBySlug("babylon-mainnet")!, blocks, txCountFor, { batch: 200 }),
  },
  {
    name: "aptos",
    network: networkBySlug("aptos-mainnet")!,
    retention: aptosFamily.retention!,
    tables: ["aptos_blocks", "aptos_transactions", "aptos_events"],
    blockTimeMs: (env) => env.APTOS_BLOCK_TIME_MS,
    windowVariable: "APTOS_DEVNET_KEEP_BLOCKS",
    grow: (blocks) => generateAptosBlocks(networkBySlug("aptos-mainnet")!, blocks, userTxCountFor, { batch: 100 }),
  },
];

/** The tables' size with their indexes and TOAST, in bytes. */
async function tablesSize(tables: string[]): Promise<number> {
  const [row] = await db().$queryRaw<Array<{ bytes: bigint }>>`SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes FROM pg_class c WHERE c.relname = ANY(${tables}) AND c.relkind = 'r'`;
  return Number(row!.bytes);
}

/** Vacuums each table past autovacuum's default threshold (50 + 20 % of its rows dead), as autovacuum would have in the interval. */
async function autovacuum(tables: string[]): Promise<number> {
  const due = await db().$queryRaw<Array<{ relname: string }>>`
    SELECT relname FROM pg_stat_user_tables WHERE relname = ANY(${tables}) AND n_dead_tup > 50 + 0.2 * greatest(n_live_tup, 0)`;
  for (const { relname } of due) await db().$executeRawUnsafe(`VACUUM ${relname}`);
  return due.length;
}

interface Run {
  blocks: number;
  window: number;
  /** Size at every simulated hour, in bytes (of the scaled run). */
  hourly: number[];
  /** Bytes a block took before the first pass removed anything. */
  perBlock: number;
  rows: number;
  pruneMs: number;
  passes: number;
  vacuums: number;
}

/** `hours` of the family's devnet, scaled down by `scale`, into the current database with retention passes. */
async function simulate(f: Family, env: Env, hours: number, scale: number): Promise<Run> {
  const perHour = Math.round(3_600_000 / f.blockTimeMs(env) / scale);
  const interval = Math.max(1, Math.round(env.RETENTION_INTERVAL_MS / f.blockTimeMs(env) / scale));
  const window = Math.round(env[f.windowVariable] / scale);
  const passEnv = { ...env, [f.windowVariable]: window };
  const run: Run = { blocks: perHour * hours, window, hourly: [], perBlock: 0, rows: 0, pruneMs: 0, passes: 0, vacuums: 0 };
  for (let done = 0; done < run.blocks; ) {
    const n = Math.min(interval - (done % interval), perHour - (done % perHour));
    await f.grow(n);
    done += n;
    if (done % interval === 0) {
      if (run.rows === 0) run.perBlock = (await tablesSize(f.tables)) / done;
      const t = performance.now();
      const report = await applyRetention({ targets: [{ network: f.network, retention: f.retention }], env: passEnv, now: 0 });
      run.pruneMs += performance.now() - t;
      run.passes += 1;
      run.rows += report.networks[f.network.slug]?.rows ?? 0;
    }
    run.vacuums += await autovacuum(f.tables);
    if (done % perHour === 0) {
      run.hourly.push(await tablesSize(f.tables));
      log(`  ${f.name}: hour ${done / perHour}, ${done.toLocaleString("en-US")} blocks, ${(run.hourly.at(-1)! / MB).toFixed(1)} MB (scaled)`);
    }
  }
  return run;
}

/** An EVM devnet's saved state over the run: the largest with retention (and once trimmed), and without. */
async function measureAnvil(env: Env, hours: number, scale: number, dir: string): Promise<{ window: number; largest: number; trimmed: number; unbounded: number; blocks: number }> {
  const network = networkBySlug("ethereum-mainnet")!;
  const window = Math.round(env.EVM_DEVNET_RETAIN_BLOCKS / scale);
  const blocks = Math.round((hours * 3600) / env.EVM_BLOCK_TIME_S / scale);
  const logger = componentLogger("bench");
  /** A devnet with the token and the emitter, then `n` blocks of a traffic round each; its state at the end. */
  const stateAfter = async (n: number, retainBlocks: number, name: string): Promise<Buffer> => {
    // Blocks are mined by the bench, not by the clock.
    const anvil = await startAnvil({ network, dir: path.join(dir, name), blockTimeSec: 86_400, retainBlocks, logger });
    try {
      const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
        const res = await fetch(anvil.url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
        const answer = (await res.json()) as { result?: T; error?: { message: string } };
        if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
        return answer.result as T;
      };
      const accounts = await rpc<Address[]>("eth_accounts");
      const [deployer, ...holders] = accounts as [Address, ...Address[]];
      const send = (tx: Record<string, string>) => rpc<string>("eth_sendTransaction", [{ from: deployer, gas: "0x100000", ...tx }]);
      await rpc("evm_setAutomine", [false]);
      await send({ data: BlockgateToken.bytecode });
      await send({ data: Emitter.bytecode });
      await rpc("evm_mine");
      const token = getContractAddress({ from: deployer, nonce: 0n });
      const emitter = getContractAddress({ from: deployer, nonce: 1n });
      for (let b = 1; b <= n; b++) {
        for (let i = 0; i < 2; i++) {
          const to = holders[(b * 2 + i) % holders.length]!;
          await send({ to: token, data: encodeFunctionData({ abi: BlockgateToken.abi, functionName: "transfer", args: [to, BigInt(b) * 10n ** 16n] }) });
        }
        await send({ to: emitter, value: "0x3b9aca00", data: encodeFunctionData({ abi: Emitter.abi, functionName: "ping", args: [BigInt(b), `heartbeat from ${network.slug}`] }) });
        await rpc("evm_mine");
      }
      return await anvil.dumpState();
    } finally {
      await anvil.stop();
    }
  };
  log(`evm: a devnet's state over ${blocks.toLocaleString("en-US")} blocks (scaled), EVM_DEVNET_RETAIN_BLOCKS=${env.EVM_DEVNET_RETAIN_BLOCKS}…`);
  const largest = await stateAfter(Math.min(blocks, 2 * window), window, "kept");
  const trimmed = await trimState(largest, window);
  const unbounded = await stateAfter(blocks, 0, "unbounded");
  return { window, largest: largest.length, trimmed: trimmed.state.length, unbounded: unbounded.length, blocks };
}

/** Points this process at a new database of the throwaway cluster, owned by the app's role and migrated. */
async function freshDatabase(pg: { url: string; superuserUrl: string }, name: string): Promise<void> {
  const url = new URL(pg.url);
  const admin = new Client({ connectionString: pg.superuserUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} OWNER "${decodeURIComponent(url.username)}"`);
  } finally {
    await admin.end();
  }
  url.pathname = `/${name}`;
  await disconnectDb();
  await applyMigrations(url.toString());
  setDatabaseUrl(url.toString());
}

export async function retentionBench(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { hours: { type: "string" }, scale: { type: "string" }, only: { type: "string" }, "dry-run": { type: "boolean" }, help: { type: "boolean", short: "h" } },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const option = wholeNumberOption(USAGE);
  const hours = option(values.hours, 24, "hours", { max: 24 * 30 });
  const scale = option(values.scale, 30, "scale", { max: 1000 });
  const families = FAMILIES.filter((f) => values.only === undefined || f.name === values.only);
  const evm = values.only === undefined || values.only === "evm";
  if (families.length === 0 && !evm) throw new Error(`--only must be consensus, aptos or evm, got "${values.only}"\n${USAGE}`);
  const started = new Date();
  const version = codeVersion(["lib/chains/retention.ts", "lib/consensus/store.ts", "lib/aptos/store.ts", "prisma/migrations"]);

  const pg = await throwawayDatabase("blockgate-bench-retention-");
  cleanup.add("disconnect from PostgreSQL", () => disconnectDb());
  const env = getEnv();
  const t0 = performance.now();
  const results: Array<{ f: Family; run: Run }> = [];
  for (const [i, f] of families.entries()) {
    await freshDatabase(pg, `retention_${i}`);
    log(`${f.name}: ${hours} h of devnet blocks, scaled down ${scale}×, a retention pass every ${env.RETENTION_INTERVAL_MS / 1000} s of blocks, ${f.windowVariable}=${env[f.windowVariable]}…`);
    results.push({ f, run: await simulate(f, env, hours, scale) });
  }
  const anvil = evm ? await measureAnvil(env, hours, scale, await tempDir("blockgate-bench-retention-anvil-")) : undefined;
  const seconds = (performance.now() - t0) / 1000;

  const mb = (bytes: number) => `${((bytes * scale) / MB).toFixed(0)} MB`;
  const table = markdownTable(
    ["devnet", "blocks", "window", "kB a block", "with retention: end", "largest", "without retention: end", "rows removed", "passes", "removal time"],
    results.map(({ f, run }) => [
      `${f.name} (${f.network.slug})`,
      (run.blocks * scale).toLocaleString("en-US"),
      `${f.windowVariable}=${env[f.windowVariable]}`,
      (run.perBlock / 1024).toFixed(1),
      mb(run.hourly.at(-1)!),
      mb(Math.max(...run.hourly)),
      mb(run.perBlock * run.blocks),
      (run.rows * scale).toLocaleString("en-US"),
      String(run.passes),
      `${((run.pruneMs * 1000) / Math.max(1, run.rows)).toFixed(1)} ms / 1,000 rows`,
    ]),
  );
  const curve = markdownTable(
    ["hour", ...results.flatMap(({ f }) => [`${f.name} with`, `${f.name} without`])],
    Array.from({ length: hours }, (_, h) => [
      String(h + 1),
      ...results.flatMap(({ run }) => [mb(run.hourly[h]!), mb((run.perBlock * run.blocks * (h + 1)) / hours)]),
    ]),
  );
  const anvilTable = anvil
    ? markdownTable(
        ["devnet", "blocks", "window", "largest saved state with retention", "after a restart", "without retention: end"],
        [
          [
            "evm (ethereum-mainnet)",
            (anvil.blocks * scale).toLocaleString("en-US"),
            `EVM_DEVNET_RETAIN_BLOCKS=${env.EVM_DEVNET_RETAIN_BLOCKS}`,
            mb(anvil.largest),
            mb(anvil.trimmed),
            mb(anvil.unbounded),
          ],
        ],
      )
    : "";
  const section = `## retention — ${started.toISOString()}

${machineInfo()}
Code: ${version}. ${hours} h of devnet blocks per family, scaled down ${scale}× (blocks, window and the interval between passes; sizes multiplied back), ${seconds.toFixed(0)} s in all; a retention pass every RETENTION_INTERVAL_MS=${env.RETENTION_INTERVAL_MS} of blocks; tables vacuumed when past autovacuum's default threshold. Without retention: the bytes a block took before the first removal, for every block of the run.

${results.length > 0 ? `${table}\n\nSize of the family's tables (indexes and TOAST included) at each simulated hour:\n\n${curve}\n` : ""}
${anvil ? `An EVM devnet's saved state (devnet_states.state, gzipped JSON; a traffic round of 3 transactions in every block):\n\n${anvilTable}\n` : ""}`;
  console.log(section);
  if (!values["dry-run"]) await prependResultsSection(section);
  return 0;
}
