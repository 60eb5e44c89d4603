/**
 * The retention worker's pass (applyRetention) over a consensus index filled on the run's real
 * PostgreSQL, read back through the real gateway: what is kept and removed, the earliest heights
 * the interfaces report, answers inside the window unchanged and below it a pruned node's, the
 * one-condition counts, fencing by term and a pass stopped half-way. Aptos devnets: aptos.test.ts.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aptosFamily } from "@/lib/aptos/family";
import { generateAptosBlocks } from "@/lib/aptos/devnet/producer";
import { aptosHead, blockByVersion, deleteAptosIndex } from "@/lib/aptos/store";
import { buildBlock, devnetChain, type PreviousBlock } from "@/lib/consensus/devnet/chain";
import { consensusFamily } from "@/lib/consensus/family";
import { deleteNetworkIndex, insertBlocks, storedRange } from "@/lib/consensus/store";
import type { IngestBlock, StatusResult, Tag } from "@/lib/consensus/types";
import { db } from "@/lib/db/client";
import { getEnv, type Env } from "@/lib/env";
import { networkBySlug, type Network } from "@/lib/networks";
import { addTestNetworks, createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";
import { LeaderLock, LeadershipLostError, type LeaderTerm } from "@/lib/workers/leader-lock";
import { applyRetention, type RetentionTarget } from "./retention";

const suffix = randomBytes(3).toString("hex");
const net: Network = { ...networkBySlug("babylon-testnet")!, slug: `retention-${suffix}` };
const aptos: Network = { ...networkBySlug("aptos-testnet")!, slug: `retention-aptos-${suffix}` };
const BLOCKS = 60;
const WINDOW = 20;
const KEEP = BLOCKS - WINDOW + 1;

let gw: TestGateway;
let key: string;
let blocks: IngestBlock[];
let env: Env;

const target: RetentionTarget = { network: net, retention: consensusFamily.retention! };
/** A pass with a window of `window` blocks; `now` at the epoch: no webhook history of other suites is swept. */
const pass = (window: number, opts: { term?: LeaderTerm; signal?: AbortSignal; targets?: RetentionTarget[] } = {}) =>
  applyRetention({ targets: opts.targets ?? [target], env: { ...env, CONSENSUS_DEVNET_RETAIN_BLOCKS: window }, batchRows: 60, now: 0, term: opts.term, signal: opts.signal });

/** The chain, with some transactions holding a key with two values, or one value twice: what the counts tell apart. */
function chain(): IngestBlock[] {
  const c = devnetChain(net.slug, String(net.devnetChainId));
  const tag = (k: string, value: string): Tag => ({ key: k, value, index: true });
  let prev: PreviousBlock | null = null;
  return Array.from({ length: BLOCKS }, (_, i) => {
    const height = i + 1;
    const { block, next } = buildBlock(c, prev, new Date(Date.UTC(2026, 0, 1, 0, 0, height)), height % 4);
    prev = next;
    const tx = block.txs[0];
    if (tx && height % 3 === 0) tx.result = { ...tx.result, tags: [...tx.result.tags, tag("transfer.amount", "1ubbn"), tag("transfer.amount", "1ubbn")] };
    return block;
  });
}

type Rpc = { result?: unknown; error?: { code: number; message: string; data?: string } };
async function call(path: string): Promise<Rpc> {
  const res = await fetch(`${gw.url}/${path}`, { headers: { "X-API-KEY": key } });
  expect(res.status, path).toBe(200);
  return (await res.json()) as Rpc;
}
const rpc = (path: string) => call(`rpc/${net.slug}/${path}`);
const native = (path: string) => call(`cometbft/${net.slug}/${path}`);

/** Reads that stay inside the window [KEEP, BLOCKS]: the same answers before and after the pass. */
function inWindow(): string[] {
  const hash = blocks[KEEP]!.txs[0]?.hash ?? blocks[KEEP + 1]!.txs[0]!.hash;
  return [
    `rpc/${net.slug}/block?height=${KEEP}`,
    `rpc/${net.slug}/block?height=${BLOCKS}`,
    `rpc/${net.slug}/tx?hash=${hash}&prove=true`,
    `rpc/${net.slug}/tx_search?query="tx.height>=${KEEP}"&per_page=100`,
    `rpc/${net.slug}/tx_search?query="transfer.amount CONTAINS 'ubbn' AND tx.height>${KEEP}"&per_page=100`,
    `rpc/${net.slug}/block_search?query="block.height>=${KEEP}"&per_page=100`,
    `rpc/${net.slug}/consensus_params?height=${KEEP}`,
    `cometbft/${net.slug}/block?height=${KEEP}`,
    `cometbft/${net.slug}/block_results?height=${KEEP}`,
    `cometbft/${net.slug}/commit?height=${KEEP}`,
    `cometbft/${net.slug}/blockchain?minHeight=${KEEP}&maxHeight=${BLOCKS}`,
    `cometbft/${net.slug}/validators?height=${KEEP}`,
    `cometbft/${net.slug}/tx?hash=0x${hash}`,
    `cometbft/${net.slug}/genesis`,
  ];
}
const answers = (paths: string[]) => Promise.all(paths.map(async (p) => (await call(p)).result));

/** The per-key and per-value counts as stored, and as the attributes left say they must be. */
async function counters(network: string) {
  const q = <T>(sql: string) => db().$queryRawUnsafe<T[]>(sql, network);
  const keys = await q<{ key: string; txs: bigint; multi: bigint }>("SELECT key, txs, multi_txs AS multi FROM consensus_attr_keys WHERE network = $1 ORDER BY key");
  const values = await q<{ key: string; value: string; txs: bigint }>("SELECT key, value, txs FROM consensus_attr_values WHERE network = $1 ORDER BY key, value");
  const realKeys = await q<{ key: string; txs: bigint; multi: bigint }>(
    `SELECT key, count(*) AS txs, count(*) FILTER (WHERE n > 1) AS multi
     FROM (SELECT height, tx_index, key, count(DISTINCT value) AS n FROM consensus_tx_attrs WHERE network = $1 GROUP BY 1, 2, 3) t GROUP BY key ORDER BY key`,
  );
  const realValues = await q<{ key: string; value: string; txs: bigint }>(
    "SELECT key, value, count(DISTINCT (height, tx_index)) AS txs FROM consensus_tx_attrs WHERE network = $1 GROUP BY key, value ORDER BY key, value",
  );
  return { stored: { keys, values }, real: { keys: realKeys, values: realValues } };
}

/** Rows of each table below `height`. */
async function rowsBelow(height: number) {
  const [row] = await db().$queryRawUnsafe<Array<Record<string, bigint>>>(
    `SELECT (SELECT count(*) FROM consensus_blocks WHERE network = $1 AND height < $2) AS blocks,
            (SELECT count(*) FROM consensus_txs WHERE network = $1 AND height < $2) AS txs,
            (SELECT count(*) FROM consensus_tx_attrs WHERE network = $1 AND height < $2) AS tx_attrs,
            (SELECT count(*) FROM consensus_block_attrs WHERE network = $1 AND height < $2) AS block_attrs`,
    net.slug,
    height,
  );
  return Object.fromEntries(Object.entries(row!).map(([k, v]) => [k, Number(v)]));
}

beforeAll(async () => {
  gw = await startTestGateway();
  addTestNetworks(net, aptos);
  env = getEnv();
  ({ apiKey: key } = await createTestProject("Retention", "ENTERPRISE"));
  blocks = chain();
  await insertBlocks(net.slug, blocks);
}, 120_000);

afterAll(async () => {
  await deleteNetworkIndex(net.slug);
  await deleteAptosIndex(aptos.slug);
  await gw?.stop();
});

describe("a consensus index past its window", () => {
  it("loses its oldest blocks in batches with their transactions, attributes and counts; answers inside the window as before, below it as a pruned node", async () => {
    const paths = inWindow();
    const before = await answers(paths);
    const prunedTx = blocks[1]!.txs[0]!.hash;
    expect((await rpc(`tx?hash=${prunedTx}`)).result).toBeDefined();

    const report = await pass(WINDOW);
    expect(report.networks[net.slug]).toMatchObject({ below: BigInt(KEEP), blocks: KEEP - 1 });
    expect(report.networks[net.slug]!.batches).toBeGreaterThan(1);

    expect(await rowsBelow(KEEP)).toEqual({ blocks: 0, txs: 0, tx_attrs: 0, block_attrs: 0 });
    expect(await rowsBelow(BLOCKS + 1)).toMatchObject({ blocks: WINDOW, txs: blocks.slice(KEEP - 1).reduce((n, b) => n + b.txs.length, 0) });
    expect(await answers(paths)).toEqual(before);

    const status = (await rpc("status")).result as StatusResult;
    expect(status.sync_info).toMatchObject({ earliest_block_height: String(KEEP), earliest_block_hash: blocks[KEEP - 1]!.result.block_id.hash, latest_block_height: String(BLOCKS) });
    expect(((await native("status")).result as StatusResult).sync_info.earliest_block_height).toBe(String(KEEP));
    const notAvailable = `height ${KEEP - 1} is not available, lowest height is ${KEEP}`;
    expect((await rpc(`block?height=${KEEP - 1}`)).error).toMatchObject({ code: -32603, message: notAvailable });
    // The native interface answers as CometBFT does: the reason in the error's data.
    expect((await native(`block?height=${KEEP - 1}`)).error).toEqual({ code: -32603, message: "Internal error", data: notAvailable });
    expect((await native(`block_results?height=1`)).error).toMatchObject({ data: `height 1 is not available, lowest height is ${KEEP}` });
    expect((await rpc(`tx?hash=${prunedTx}`)).error).toMatchObject({ code: -32603, message: `tx (${prunedTx}) not found` });

    // One-condition total_counts come from the counts, which lost exactly the removed transactions.
    const { stored, real } = await counters(net.slug);
    expect(stored).toEqual(real);
    for (const query of ["message.action='send'", "transfer.amount EXISTS", "transfer.amount CONTAINS 'ubbn'", "tx.fee='2000ubbn'"]) {
      const counted = (await rpc(`tx_search?query="${query} AND tx.height>0"`)).result as { total_count: string };
      expect((await rpc(`tx_search?query="${query}"`)).result, query).toMatchObject({ total_count: counted.total_count });
    }

    // Nothing more to remove until the chain grows.
    expect((await pass(WINDOW)).networks[net.slug]).toMatchObject({ blocks: 0, rows: 0 });
  });

  it("writes nothing with a term that is over, and a pass stopped half-way leaves whole blocks that the next pass goes on from", async () => {
    const lock = (n: number) => new LeaderLock(process.env.DATABASE_URL!, "retention-test", `${net.slug}-${n}`, () => undefined);
    const first = lock(1);
    const second = lock(1);
    expect(await first.tryAcquire()).toBe(true);
    const stale = first.term;
    await first.release();
    expect(await second.tryAcquire()).toBe(true);
    try {
      const keep = BLOCKS - 9;
      await expect(pass(10, { term: stale })).rejects.toBeInstanceOf(LeadershipLostError);
      expect((await storedRange(net.slug))!.earliest).toBe(BigInt(KEEP));

      // Stopped after its first batch, as a stop or a lost lock ends it.
      const stop = new AbortController();
      const stopping: RetentionTarget = {
        network: net,
        retention: {
          keepFrom: target.retention.keepFrom,
          async prune(n, below, opts) {
            const done = await target.retention.prune(n, below, { ...opts, maxBlocks: 3 });
            stop.abort();
            return done;
          },
        },
      };
      expect((await pass(10, { term: second.term, signal: stop.signal, targets: [stopping] })).networks[net.slug]).toMatchObject({ blocks: 3, batches: 1 });
      const earliest = Number((await storedRange(net.slug))!.earliest);
      expect(earliest).toBe(KEEP + 3);
      const [left] = await db().$queryRawUnsafe<Array<{ short: bigint }>>(
        "SELECT count(*) AS short FROM consensus_blocks b WHERE network = $1 AND num_txs <> (SELECT count(*) FROM consensus_txs t WHERE t.network = b.network AND t.height = b.height)",
        net.slug,
      );
      expect(Number(left!.short)).toBe(0);
      const { stored, real } = await counters(net.slug);
      expect(stored).toEqual(real);

      expect((await pass(10, { term: second.term })).networks[net.slug]).toMatchObject({ below: BigInt(keep), blocks: keep - earliest });
      expect((await storedRange(net.slug))!.earliest).toBe(BigInt(keep));
      expect(((await native("genesis")).result as { genesis: { genesis_time: string } }).genesis.genesis_time).toBe("2026-01-01T00:00:01Z");
    } finally {
      await second.release();
    }
  });
});

describe("the windows", () => {
  it("are the devnet's or the upstream's setting by the network's source, and 0 keeps everything", async () => {
    const upstream: Network = { ...net, source: { kind: "upstream", urls: ["http://127.0.0.1:1"] } };
    const { latest } = (await storedRange(net.slug))!;
    const keepFrom = consensusFamily.retention!.keepFrom;
    const windows = { ...env, CONSENSUS_DEVNET_RETAIN_BLOCKS: 5, CONSENSUS_UPSTREAM_RETAIN_BLOCKS: 8 };
    expect(await keepFrom(net, windows)).toBe(latest - 4n);
    expect(await keepFrom(upstream, windows)).toBe(latest - 7n);
    expect(await keepFrom(net, { ...windows, CONSENSUS_DEVNET_RETAIN_BLOCKS: 0 })).toBeNull();

    // Aptos: a devnet keeps blocks; an upstream's index transactions, from the block holding the oldest one kept.
    await generateAptosBlocks(aptos, 12, 3);
    const head = (await aptosHead(aptos.slug))!;
    const aptosKeepFrom = aptosFamily.retention!.keepFrom;
    const aptosWindows = { ...env, APTOS_DEVNET_KEEP_BLOCKS: 4, APTOS_UPSTREAM_RETAIN_VERSIONS: 10 };
    expect(await aptosKeepFrom(aptos, aptosWindows)).toBe(head.latest.height - 3n);
    const holding = (await blockByVersion(aptos.slug, head.latest.lastVersion - 9n))!;
    expect(await aptosKeepFrom({ ...aptos, source: { kind: "upstream", urls: ["http://127.0.0.1:1"] } }, aptosWindows)).toBe(holding.height);
    expect(await aptosKeepFrom(aptos, { ...aptosWindows, APTOS_DEVNET_KEEP_BLOCKS: 0 })).toBeNull();
  });
});
