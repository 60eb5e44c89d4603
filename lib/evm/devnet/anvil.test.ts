import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { networkBySlug } from "@/lib/networks";
import { isAlive } from "@/lib/process/children";
import { captureLogs } from "@/lib/testing/logs";
import { freePort } from "@/lib/testing/ports";
import { AnvilSupervisor, anvilBinary } from "./anvil";

let dataDir: string;
afterAll(async () => {
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

describe("an anvil devnet's state file", () => {
  it("is never shared: an anvil an earlier start left running on it is stopped first, and the new one's pid is recorded", async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "blockgate-anvil-"));
    const network = networkBySlug("ethereum-holesky")!;
    const dir = path.join(dataDir, network.slug);
    mkdirSync(dir, { recursive: true });
    const statePath = path.join(dir, "state.json");
    // What a kill -9 of an older Blockgate leaves behind: an anvil on the state file, and its pid file.
    const leftover = spawn(anvilBinary(), ["--host", "127.0.0.1", "--port", String(await freePort()), "--state", statePath, "--silent"], { detached: true, stdio: "ignore" });
    writeFileSync(path.join(dir, "anvil.pid"), String(leftover.pid));
    const exited = new Promise<void>((resolve) => leftover.once("exit", () => resolve()));

    const logs = captureLogs();
    const supervisor = new AnvilSupervisor({ dataDir, blockTimeSec: 1, idleMs: 60_000, logger: logs.logger });
    try {
      const url = await supervisor.url(network);
      await exited;
      expect(logs.messages.some((m) => m.startsWith(`stopped an anvil left running by an earlier start (pid ${leftover.pid})`))).toBe(true);
      const pid = Number(readFileSync(path.join(dir, "anvil.pid"), "utf8"));
      expect(pid).not.toBe(leftover.pid);
      expect(isAlive(pid)).toBe(true);
      const res = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' });
      expect(((await res.json()) as { result: string }).result).toBe(`0x${Number(network.devnetChainId).toString(16)}`);
    } finally {
      await supervisor.stopAll();
    }
  });
});
