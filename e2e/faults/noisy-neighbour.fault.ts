/**
 * One free account running the most expensive searches the query language allows, from eight
 * loops in another process, must not slow another project: its /status p50 stays within 2x of
 * its own baseline measured in the same run.
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateBlocks } from "@/lib/consensus/devnet/producer";
import { networkBySlug } from "@/lib/networks";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";

const NET = "babylon-testnet";
const ROUNDS = 3;
const SAMPLES = 100;
let gw: TestGateway;
let victimKey: string;
let attackerKey: string;

// Ten distinct conditions (the most a query may have), wide ranges and substring matches.
const HEAVY = [
  "tx.height>0",
  "tx.height<100000000",
  "tx.height>=1",
  "transfer.amount>0",
  "transfer.amount<999999999999",
  "transfer.sender CONTAINS 'bbn'",
  "transfer.recipient CONTAINS 'bbn'",
  "message.sender CONTAINS 'bbn'",
  "message.action EXISTS",
  "tx.height<=99999999",
].join(" AND ");

const median = (times: number[]) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!;

async function sample(n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await fetch(`${gw.url}/rpc/${NET}/status`, { headers: { "X-API-KEY": victimKey } });
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    times.push(performance.now() - t);
  }
  return times;
}

beforeAll(async () => {
  gw = await startTestGateway();
  ({ apiKey: victimKey } = await createTestProject("Victim", "ENTERPRISE"));
  ({ apiKey: attackerKey } = await createTestProject("Attacker"));
  await generateBlocks(networkBySlug(NET)!, 100, 6);
});
afterAll(async () => gw?.stop());

describe("a noisy neighbour", () => {
  it("does not move another project's /status p50 past 2x its baseline", async () => {
    await sample(SAMPLES); // warm-up
    // Eight loops of heavy searches in another process, each pausing so that the account stays
    // under the free plan's CU per second (the attack the limits alone do not stop).
    const script = `
      const [url, key, query] = process.argv.slice(1);
      let stop = false, sent = 0, refused = 0;
      process.on("SIGTERM", () => { stop = true; });
      const loop = async () => {
        while (!stop) {
          const r = await fetch(url + "/tx_search?query=" + encodeURIComponent(query) + "&per_page=100", { headers: { "X-API-KEY": key } }).catch(() => undefined);
          if (r) { sent++; if (r.status !== 200) refused++; await r.arrayBuffer(); }
          await new Promise((res) => setTimeout(res, 1400));
        }
      };
      Promise.all(Array.from({ length: 8 }, loop)).then(() => { process.stdout.write(JSON.stringify({ sent, refused })); process.exit(0); });
    `;
    const attacker = spawn(process.execPath, ["-e", script, `${gw.url}/rpc/${NET}`, attackerKey, HEAVY], { stdio: ["ignore", "pipe", "inherit"] });
    let report = "";
    attacker.stdout.on("data", (d: Buffer) => (report += d.toString()));
    const done = new Promise<void>((resolve) => attacker.once("exit", () => resolve()));
    // Rounds with the attacker paused (SIGSTOP, after its searches in flight ended) and running,
    // in turn, so that whatever else loads the machine meanwhile weighs on both alike.
    const quiet: number[] = [];
    const loaded: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      attacker.kill("SIGSTOP");
      await new Promise((r) => setTimeout(r, 1500));
      quiet.push(...(await sample(SAMPLES)));
      attacker.kill("SIGCONT");
      await new Promise((r) => setTimeout(r, 800));
      loaded.push(...(await sample(SAMPLES)));
    }
    const baseline = median(quiet);
    const underLoad = median(loaded);
    attacker.kill("SIGTERM");
    await done;
    const { sent } = JSON.parse(report || "{}") as { sent?: number };
    expect(sent ?? 0, "the attacker ran").toBeGreaterThan(8);
    expect(underLoad, `baseline p50 ${baseline.toFixed(2)} ms, under load ${underLoad.toFixed(2)} ms`).toBeLessThanOrEqual(2 * baseline);
  });
});
