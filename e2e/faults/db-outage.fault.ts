// kill -9 of the embedded PostgreSQL while the service is under load: what needs the database
// answers 503 with Retry-After, what does not keeps answering, the launcher restarts PostgreSQL,
// everything answers again without a restart of the service, and usage is exact.
import { rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { generateKeyMaterial } from "@/lib/keys/secret";
import { assertRunning, databaseUrlOf, projectOnPlan, postmasterPid, printOutput, scratchDataDir, startService, storedUsage, waitFor, type ServiceProcess, type StoredUsage } from "./service";

let dataDir: string;
let service: ServiceProcess;
let project: { projectId: string; apiKey: string };

beforeAll(async () => {
  dataDir = scratchDataDir();
  service = await startService(dataDir);
  project = await projectOnPlan(service);
}, 300_000);

afterAll(async () => {
  if (service && service.child.exitCode === null) {
    service.child.kill("SIGTERM");
    await service.exited;
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const OUTAGE_MESSAGE = "The service's database is unreachable at the moment. Please retry shortly.";

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: unknown;
}

async function send(agent: Agent, path: string, init: { method: "GET" | "POST"; key: string; body?: string }): Promise<Answer> {
  const res = await request(`${service.url}${path}`, {
    method: init.method,
    dispatcher: agent,
    headers: { "content-type": "application/json", "x-api-key": init.key },
    body: init.body,
  });
  const retryAfter = res.headers["retry-after"];
  return { status: res.statusCode, retryAfter: typeof retryAfter === "string" ? retryAfter : undefined, body: await res.body.json() };
}

const chainId = (agent: Agent, key: string) => send(agent, "/node/ethereum-mainnet", { method: "POST", key, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' });
const status = (agent: Agent, key: string) => send(agent, "/rpc/babylon-mainnet/status", { method: "GET", key });

/** Holds a TCP port (accepting and dropping connections) so that nothing else can listen on it. */
async function holdPort(port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer((socket) => {
      socket.on("error", () => undefined);
      socket.destroy();
    });
    server.once("error", () => resolve(undefined));
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

describe("kill -9 of the embedded PostgreSQL under load", () => {
  it("answers 503 with Retry-After where the database is needed, keeps serving known keys, comes back by itself, and meters every answer exactly once", async () => {
    onTestFailed(() => printOutput(service));
    const agent = new Agent({ connections: 8, keepAliveTimeout: 60_000 });
    // What the service should have metered for the project: every answer it sent, 0 CU for errors.
    const expected: StoredUsage = { requests: 0, errors: 0, cu: 0 };
    const seen = { chainId: 0, statusOk: 0, statusUnavailable: 0 };
    const surprises: Answer[] = [];

    const account = (kind: "chainId" | "status", a: Answer) => {
      expected.requests++;
      if (kind === "chainId" && a.status === 200 && (a.body as { result?: unknown }).result === "0xf1b31") {
        expected.cu += 5;
        seen.chainId++;
      } else if (kind === "status" && a.status === 200 && (a.body as { result?: unknown }).result !== undefined) {
        expected.cu += 10;
        seen.statusOk++;
      } else if (kind === "status" && a.status === 503) {
        expected.errors++;
        seen.statusUnavailable++;
        // The JSON-RPC error as the envelope answers it, with the URI form's id.
        if (a.retryAfter !== "5" || JSON.stringify(a.body) !== JSON.stringify({ jsonrpc: "2.0", id: -1, error: { code: -32002, message: OUTAGE_MESSAGE, data: { retryAfter: 5 } } })) surprises.push(a);
      } else {
        // The devnet's first block may not be there yet: an error answer, metered as one.
        expected.errors++;
        if (!(kind === "status" && a.status === 200 && seen.statusOk === 0)) surprises.push(a);
      }
    };

    // Warm up: the key is verified (and cached), and the consensus devnet has a block.
    await waitFor("the consensus devnet's first block", async () => {
      const a = await status(agent, project.apiKey);
      account("status", a);
      return a.status === 200 && seen.statusOk > 0;
    });
    account("chainId", await chainId(agent, project.apiKey));

    let loading = true;
    const broken: string[] = [];
    const loop = async (kind: "chainId" | "status") => {
      while (loading) {
        try {
          account(kind, await (kind === "chainId" ? chainId : status)(agent, project.apiKey));
        } catch (e) {
          // The service must answer every request: a dropped connection is a failure.
          broken.push(`${kind} at ${new Date().toISOString()}: ${String(e)}`);
          return;
        }
      }
    };
    const loops = [loop("chainId"), loop("chainId"), loop("chainId"), loop("status"), loop("status"), loop("status")];
    try {
      const running = () => {
        assertRunning(service);
        return true;
      };
      await waitFor("load before the kill", () => running() && seen.statusOk > 50 && seen.chainId > 50);

      const pid = postmasterPid(dataDir);
      const port = Number(service.env.EMBEDDED_PG_PORT);
      process.kill(pid, "SIGKILL");
      // Keep PostgreSQL from coming back until the outage has been seen from outside.
      let blocker: Server | undefined;
      await waitFor("PostgreSQL's port to be free", async () => (blocker = await holdPort(port)) !== undefined);
      const before = { ...seen };
      await waitFor("503s on the database's endpoints and answers on the node endpoint", () => running() && seen.statusUnavailable > before.statusUnavailable + 10 && seen.chainId > before.chainId + 50);

      // A key the service has not verified yet needs the database: 503 UNAVAILABLE, not 401 or 500.
      const unknown = await chainId(agent, generateKeyMaterial().secret);
      expect({ status: unknown.status, retryAfter: unknown.retryAfter, body: unknown.body }).toEqual({ status: 503, retryAfter: "5", body: { code: "UNAVAILABLE", message: OUTAGE_MESSAGE } });

      await new Promise<void>((resolve) => blocker!.close(() => resolve()));
      const outage = { ...seen };
      await waitFor("the database's endpoints to answer again", () => running() && seen.statusOk > outage.statusOk + 50, 60_000);
    } finally {
      loading = false;
      await Promise.all(loops);
      await agent.close();
    }

    expect(broken).toEqual([]);
    // On failure, the service's error lines say why.
    expect(surprises, JSON.stringify(service.logs.filter((l) => l.level >= 50).slice(0, 5), null, 1)).toEqual([]);
    expect(service.child.exitCode).toBeNull();

    // Every answer metered once: nothing lost while the database was away, nothing counted twice.
    const databaseUrl = databaseUrlOf(service);
    await waitFor("the usage to be written", async () => (await storedUsage(databaseUrl, project.projectId)).requests >= expected.requests, 30_000);
    expect(await storedUsage(databaseUrl, project.projectId)).toEqual(expected);
    // Two flush intervals later, still the same.
    await new Promise((r) => setTimeout(r, 2500));
    expect(await storedUsage(databaseUrl, project.projectId)).toEqual(expected);

    // The log: the postmaster's death and restart, one line when the outage began and one when it
    // ended, and no error line (let alone a stack trace) per request.
    const messages = service.logs.map((l) => l.msg);
    expect(messages.filter((m) => m.startsWith("PostgreSQL exited unexpectedly"))).toHaveLength(1);
    expect(messages.filter((m) => m.startsWith("PostgreSQL restarted"))).toHaveLength(1);
    expect(messages.filter((m) => m.startsWith("the database is unreachable"))).toHaveLength(1);
    expect(messages.filter((m) => m.startsWith("the database answers again after"))).toHaveLength(1);
    expect(service.logs.filter((l) => l.level >= 50 && !l.msg.startsWith("the database is unreachable"))).toEqual([]);
    // Errors are named by their message only: no serialized error object, so no stack trace.
    expect(service.logs.filter((l) => typeof l.err === "object")).toEqual([]);
  });
});
