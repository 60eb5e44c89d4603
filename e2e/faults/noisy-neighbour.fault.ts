/**
 * A noisy free account must not slow another project: its /status p50 stays within 2x of its own
 * baseline measured in the same run, whether the account runs the most expensive searches the
 * query language allows (eight loops in another process), or floods as fast as it can with calls
 * the CU-per-second limit refuses (429).
 */
import { spawn, type ChildProcess } from "node:child_process";
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
let flooderKey: string;

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

/**
 * The victim's /status times with `attacker` paused (SIGSTOP, after what it had in flight ended)
 * and running, in turns, so that whatever else loads the machine meanwhile weighs on both alike.
 */
async function alternate(attacker: ChildProcess, o: { rounds: number; samples: number; pauseMs: number; resumeMs: number }): Promise<{ quiet: number[]; loaded: number[] }> {
  const quiet: number[] = [];
  const loaded: number[] = [];
  for (let round = 0; round < o.rounds; round++) {
    attacker.kill("SIGSTOP");
    await new Promise((r) => setTimeout(r, o.pauseMs));
    quiet.push(...(await sample(o.samples)));
    attacker.kill("SIGCONT");
    await new Promise((r) => setTimeout(r, o.resumeMs));
    loaded.push(...(await sample(o.samples)));
  }
  return { quiet, loaded };
}

/** Runs `script` (node -e) with `args`; `report()` stops it (SIGTERM) and parses what it wrote on stdout. */
function spawnAttacker(script: string, args: string[]) {
  const child = spawn(process.execPath, ["-e", script, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    report: async <T>(): Promise<T> => {
      child.kill("SIGCONT");
      child.kill("SIGTERM");
      await exited;
      return JSON.parse(out || "{}") as T;
    },
  };
}

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
  ({ apiKey: flooderKey } = await createTestProject("Flooder"));
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
    const attacker = spawnAttacker(script, [`${gw.url}/rpc/${NET}`, attackerKey, HEAVY]);
    const { quiet, loaded } = await alternate(attacker.child, { rounds: ROUNDS, samples: SAMPLES, pauseMs: 1500, resumeMs: 800 });
    const baseline = median(quiet);
    const underLoad = median(loaded);
    const { sent } = await attacker.report<{ sent?: number }>();
    expect(sent ?? 0, "the attacker ran").toBeGreaterThan(8);
    expect(underLoad, `baseline p50 ${baseline.toFixed(2)} ms, under load ${underLoad.toFixed(2)} ms`).toBeLessThanOrEqual(2 * baseline);
  });

  it("flooding calls that its CU per second refuses (429) does not move another project's /status p50 past 2x its baseline", async () => {
    // Sixteen keep-alive loops in another process, each sending the next call as soon as the last
    // is answered: far past the free plan's 300 CU/s (30 of these calls a second), so the rest are
    // refused, and each connection's 10th refusal in a row is held back a second and closes it.
    const script = `
      const { Agent, request } = require("undici");
      const [url, key] = process.argv.slice(1);
      const agent = new Agent({ connections: 16, pipelining: 1 });
      const body = '{"jsonrpc":"2.0","id":1,"method":"status"}';
      const headers = { "content-type": "application/json", "x-api-key": key };
      let stop = false, sent = 0;
      const statuses = {}, errors = {};
      const started = performance.now();
      process.on("SIGTERM", () => { stop = true; });
      const loop = async () => {
        while (!stop) {
          try {
            const r = await request(url, { method: "POST", body, headers, dispatcher: agent });
            await r.body.dump();
            statuses[r.statusCode] = (statuses[r.statusCode] ?? 0) + 1;
          } catch (e) { errors[e.code ?? e.name] = (errors[e.code ?? e.name] ?? 0) + 1; }
          sent++;
        }
      };
      Promise.all(Array.from({ length: 16 }, loop)).then(() => {
        const cpu = process.cpuUsage();
        process.stdout.write(JSON.stringify({ sent, statuses, errors, seconds: (performance.now() - started) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6 }));
        process.exit(0);
      });
    `;
    await sample(SAMPLES); // warm-up
    const flooder = spawnAttacker(script, [`${gw.url}/rpc/${NET}`, flooderKey]);
    const { quiet, loaded } = await alternate(flooder.child, { rounds: ROUNDS, samples: SAMPLES, pauseMs: 500, resumeMs: 500 });
    const baseline = median(quiet);
    const underLoad = median(loaded);
    const report = await flooder.report<{ sent: number; statuses: Record<string, number>; errors: Record<string, number>; seconds: number; cpuSeconds: number }>();
    const summary = `baseline p50 ${baseline.toFixed(2)} ms, under the flood ${underLoad.toFixed(2)} ms; flood ${JSON.stringify(report)}`;
    // The numbers, for bench/RESULTS.md and for whoever reads a failure.
    console.log(summary);
    // The flood ran (about half the time: it is paused for the baseline), mostly refused, without a connection error.
    expect(report.sent, summary).toBeGreaterThan(200);
    expect(report.statuses["429"] ?? 0, summary).toBeGreaterThan(report.sent / 2);
    expect(report.errors, summary).toEqual({});
    expect(underLoad, summary).toBeLessThanOrEqual(2 * baseline);
  });
});
