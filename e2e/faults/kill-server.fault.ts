/**
 * The real service (`bin/start.mjs --api-only`, embedded PostgreSQL, devnets) killed with SIGKILL
 * under load, then started again on the same data directory: its children die with it, it starts
 * clean, chain heights never go backwards, the consensus index has no gaps, and usage loses at
 * most what was answered in the last flush interval, never counting anything twice.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/auth/users";
import { db, disconnectDb } from "@/lib/db/client";
import { resetEnv } from "@/lib/env";
import { isAlive } from "@/lib/process/children";
import { createProject } from "@/lib/projects/service";
import { freePort } from "@/lib/testing/ports";

const root = path.resolve(import.meta.dirname, "..", "..");
const FLUSH_MS = 1000;
const secrets = { APP_SECRET: randomBytes(32).toString("base64url"), NEXTAUTH_SECRET: randomBytes(32).toString("base64url") };
let dataDir: string;
let server: ChildProcess | undefined;

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function start(port: number): ChildProcess {
  const child = spawn(process.execPath, ["bin/start.mjs", "--api-only"], {
    cwd: root,
    env: { ...process.env, ...secrets, DATABASE_URL: "", DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", CONSENSUS_BLOCK_TIME_MS: "200", EVM_BLOCK_TIME_S: "1", USAGE_FLUSH_MS: String(FLUSH_MS), LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  return child;
}

/** Pids of PostgreSQL processes listening on the port (the postmaster's command line names it). */
function postgresOn(port: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (cmd[0]?.endsWith("postgres") && cmd.includes("-p") && cmd[cmd.indexOf("-p") + 1] === String(port)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

afterAll(async () => {
  server?.kill("SIGTERM");
  await disconnectDb();
  // A devnet of the last server may still be writing its state for a moment after that server
  // ends (its children follow it within about a second): retry while the directory refills.
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true, maxRetries: 20, retryDelay: 250 });
});

describe("kill -9 of the server under load", () => {
  it("leaves no child behind, restarts clean, keeps heights and the index whole, and loses usage only within the flush interval", async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "blockgate-kill-"));
    await fs.chmod(dataDir, 0o755);
    const port = await freePort();
    server = start(port);
    const base = `http://127.0.0.1:${port}`;
    await waitFor("the server", async () => ((await fetch(`${base}/rpc/babylon-testnet/status`)).status === 401 ? true : undefined));
    const creds = JSON.parse(await fs.readFile(path.join(dataDir, "postgres.json"), "utf8")) as { appPassword: string; port: number };
    const dbUrl = `postgresql://blockgate:${encodeURIComponent(creds.appPassword)}@127.0.0.1:${creds.port}/blockgate`;
    process.env.DATABASE_URL = dbUrl;
    Object.assign(process.env, secrets);
    resetEnv();
    const user = await createUser({ email: `kill-${Date.now()}@example.com`, password: "correct horse battery" });
    const { projectId, apiKey } = await createProject(user.id, "Kill");
    await db().project.update({ where: { id: projectId }, data: { plan: "ENTERPRISE" } });
    const headers = { "Content-Type": "application/json", "X-API-KEY": apiKey };
    const consensusHeight = async () => Number(((await (await fetch(`${base}/rpc/babylon-testnet/status`, { headers })).json()) as { result: { sync_info: { latest_block_height: string } } }).result.sync_info.latest_block_height);
    const evmHeight = async () => Number(((await (await fetch(`${base}/node/ethereum-sepolia`, { method: "POST", headers, body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}' })).json()) as { result: string }).result);
    await waitFor("consensus blocks", async () => ((await consensusHeight()) >= 5 ? true : undefined));
    await waitFor("EVM blocks", async () => ((await evmHeight()) >= 2 ? true : undefined));

    // Load: eth_chainId (5 CU each) from 4 loops, timestamps of every answer kept.
    const answeredAt: number[] = [];
    let stop = false;
    const loop = async () => {
      while (!stop) {
        try {
          const res = await fetch(`${base}/node/ethereum-sepolia`, { method: "POST", headers, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' });
          if (res.status === 200 && ((await res.json()) as { result?: string }).result) answeredAt.push(Date.now());
        } catch {
          return;
        }
      }
    };
    const loops = Array.from({ length: 4 }, loop);
    await new Promise((r) => setTimeout(r, 2500));
    const heightsBefore = { consensus: await consensusHeight(), evm: await evmHeight() };
    const anvilPid = Number(await fs.readFile(path.join(dataDir, "anvil", "ethereum-sepolia", "anvil.pid"), "utf8"));
    const pgPids = postgresOn(creds.port);
    expect(pgPids.length).toBeGreaterThan(0);
    const killedAt = Date.now();
    server.kill("SIGKILL");
    stop = true;
    await Promise.all(loops);
    await disconnectDb();

    // Its children die with it.
    await waitFor("anvil to stop", async () => (isAlive(anvilPid) ? undefined : true), 20_000);
    await waitFor("PostgreSQL to stop", async () => (postgresOn(creds.port).length === 0 ? true : undefined), 30_000);

    // Started again on the same data directory.
    server = start(port);
    await waitFor("the server to start again", async () => ((await fetch(`${base}/rpc/babylon-testnet/status`, { headers })).status === 200 ? true : undefined));
    expect(await consensusHeight()).toBeGreaterThanOrEqual(heightsBefore.consensus);
    expect(await evmHeight()).toBeGreaterThanOrEqual(heightsBefore.evm);
    await waitFor("the consensus devnet to go on", async () => ((await consensusHeight()) > heightsBefore.consensus + 3 ? true : undefined));

    const client = new pg.Client({ connectionString: dbUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ lo: string; hi: string; n: string }>("SELECT min(height) AS lo, max(height) AS hi, count(*) AS n FROM consensus_blocks WHERE network = 'babylon-testnet'");
      const { lo, hi, n } = rows[0]!;
      expect(Number(n)).toBe(Number(hi) - Number(lo) + 1);
      const usage = await client.query<{ requests: string }>("SELECT coalesce(sum(requests), 0) AS requests FROM usage_buckets WHERE project_id = $1 AND endpoint = 'eth_chainId'", [projectId]);
      const stored = Number(usage.rows[0]!.requests);
      const answered = answeredAt.length;
      const lastInterval = answeredAt.filter((t) => t > killedAt - FLUSH_MS - 250).length;
      expect(answered).toBeGreaterThan(50);
      expect(stored).toBeLessThanOrEqual(answered);
      expect(answered - stored, `answered ${answered}, stored ${stored}, in the last flush interval ${lastInterval}`).toBeLessThanOrEqual(lastInterval);
    } finally {
      await client.end();
    }
  });
});
