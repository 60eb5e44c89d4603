// Stopping under load: SIGTERM while keep-alive clients keep the service busy drains it (/readyz
// answers 503 while the load is still served; then requests in flight as the listener closes are
// answered, with Connection: close, and metered; no keep-alive request is cut off; an open WebSocket
// is closed with 1001 and a reason), stops it cleanly, and leaves no child process behind; kill -9
// leaves none behind either.
import { rmSync } from "node:fs";
import { connect } from "node:net";
import { Agent, request } from "undici";
import { afterAll, describe, expect, it, onTestFailed } from "vitest";
import WebSocket from "ws";
import {
  databaseUrlOf,
  descendants,
  projectOnPlan,
  printOutput,
  processesMentioning,
  scratchDataDir,
  startService,
  stillRunning,
  storedUsage,
  waitFor,
  type ServiceProcess,
  type StoredUsage,
} from "./service";

const dataDir = scratchDataDir();
const started: ServiceProcess[] = [];

afterAll(async () => {
  for (const service of started) {
    if (service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill("SIGKILL");
      await service.exited;
    }
  }
  await waitFor("no process of the test's data directory to be left", () => processesMentioning(dataDir).length === 0, 20_000).catch(() => undefined);
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(): Promise<ServiceProcess> {
  const service = await startService(dataDir);
  started.push(service);
  return service;
}

type Kind = "blockNumber" | "status";

function call(service: ServiceProcess, agent: Agent, kind: Kind, key: string) {
  return kind === "blockNumber"
    ? request(`${service.url}/node/ethereum-mainnet`, {
        method: "POST",
        dispatcher: agent,
        headers: { "content-type": "application/json", "x-api-key": key },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}',
      })
    : request(`${service.url}/rpc/babylon-mainnet/status`, { method: "GET", dispatcher: agent, headers: { "x-api-key": key } });
}

/** Both kinds cost 10 CU when they succeed; an error answer costs nothing and counts as an error. */
function account(expected: StoredUsage, status: number, body: unknown): boolean {
  expected.requests++;
  const ok = status === 200 && typeof body === "object" && body !== null && "result" in body;
  if (ok) expected.cu += 10;
  else expected.errors++;
  return ok;
}

/** A request whose body is still arriving: the server has read its head (it said 100 Continue) and waits for the rest. */
async function requestInFlight(service: ServiceProcess, key: string) {
  const body = '{"jsonrpc":"2.0","id":7,"method":"eth_blockNumber"}';
  const socket = connect(Number(new URL(service.url).port), "127.0.0.1");
  let text = "";
  socket.on("data", (d: Buffer) => (text += d.toString()));
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.on("error", () => undefined);
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  socket.write(
    `POST /node/ethereum-mainnet HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-API-KEY: ${key}\r\n` +
      `Content-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
  );
  await waitFor("100 Continue", () => text.includes("100 Continue"));
  return {
    finish: () => socket.write(body),
    /** Everything the server sent, once it closed the connection. */
    answer: async () => {
      await closed;
      return text;
    },
  };
}

describe("stopping the service", () => {
  it("on SIGTERM under keep-alive load: /readyz 503 while still serving, then answers what is in flight with Connection: close, cuts no keep-alive request, closes WebSockets with 1001, meters every answer, exits cleanly, and leaves no child", async () => {
    const service = await start();
    onTestFailed(() => printOutput(service));
    const project = await projectOnPlan(service);
    const agent = new Agent({ connections: 8, keepAliveTimeout: 60_000 });
    const expected: StoredUsage = { requests: 0, errors: 0, cu: 0 };

    // Warm up: the anvil devnet and the consensus devnet's first block.
    for (const kind of ["blockNumber", "status"] as const) {
      await waitFor(`a first answer to ${kind}`, async () => {
        const res = await call(service, agent, kind, project.apiKey);
        return account(expected, res.statusCode, await res.body.json());
      });
    }
    const children = descendants(service.pid);
    expect(children.some((p) => p.command.includes("anvil")), JSON.stringify(children)).toBe(true);
    expect(children.some((p) => p.command.includes("postgres")), JSON.stringify(children)).toBe(true);

    // An open WebSocket (nothing sent on it, so nothing metered), told why when the service stops.
    const ws = new WebSocket(`${service.url.replace(/^http/, "ws")}/cometbft/babylon-mainnet/${project.apiKey}/websocket`);
    const wsClosed = new Promise<[number, string]>((resolve) => ws.once("close", (code, reason) => resolve([code, reason.toString()])));
    ws.on("error", () => undefined);
    await new Promise<void>((resolve) => ws.once("open", () => resolve()));

    let answered = 0;
    /** How requests without an answer failed: only a new connection to a service no longer listening may. */
    const failures: string[] = [];
    const loop = async (kind: Kind) => {
      for (;;) {
        let res: Awaited<ReturnType<typeof call>>;
        try {
          res = await call(service, agent, kind, project.apiKey);
        } catch (e) {
          // Refused once the service stopped listening: done.
          failures.push((e as { code?: string }).code ?? String(e));
          return;
        }
        const body: unknown = await res.body.json();
        account(expected, res.statusCode, body);
        answered++;
      }
    };
    const loops = Array.from({ length: 8 }, (_, i) => loop(i % 2 === 0 ? "blockNumber" : "status"));
    await waitFor("load", () => answered > 200);

    const inFlight = await requestInFlight(service, project.apiKey);
    service.child.kill("SIGTERM");
    // The drain: /readyz says so at once while the load is still answered; then the listener closes.
    await waitFor("/readyz to answer 503", async () => (await fetch(`${service.url}/readyz`)).status === 503);
    expect(await (await fetch(`${service.url}/readyz`)).json()).toEqual({ status: "draining" });
    const answeredDraining = answered;
    await waitFor("load answered while draining", () => answered > answeredDraining + 20);
    await waitFor("the listener to close", () => fetch(`${service.url}/healthz`).then(() => false, () => true));
    inFlight.finish();
    const exit = await service.exited;
    await Promise.all(loops);
    await agent.close();

    // Stopped by itself, not by the launcher's forced exit after 10 s.
    expect(exit).toEqual({ code: 0, signal: null });
    expect(service.output).toContain("Stopped.");
    expect(service.output.some((l) => l.includes("Shutdown took longer"))).toBe(false);

    // No request sent on a kept-alive connection was cut off (ECONNRESET, or undici's "other side closed").
    expect(failures.filter((code) => code !== "ECONNREFUSED")).toEqual([]);
    expect(await wsClosed).toEqual([1001, "server shutting down"]);

    // The request in flight was answered in full and told to close its connection.
    const text = await inFlight.answer();
    expect(text).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    expect(text.toLowerCase()).toContain("\r\nconnection: close\r\n");
    expect(text).toMatch(/\{"jsonrpc":"2\.0","id":7,"result":"0x[0-9a-f]+"\}$/);
    account(expected, 200, { result: "0x1" });

    // No child left: not the devnets, not PostgreSQL, not their wrappers and watchers.
    expect(stillRunning(children.map((p) => p.pid))).toEqual([]);
    expect(processesMentioning(dataDir)).toEqual([]);

    // Every answered request is metered (read through the next start's database).
    const next = await start();
    expect(await storedUsage(databaseUrlOf(next), project.projectId)).toEqual(expected);
    next.child.kill("SIGTERM");
    expect(await next.exited).toEqual({ code: 0, signal: null });
  });

  it("on kill -9 of the service: its children stop by themselves", async () => {
    const service = await start();
    onTestFailed(() => printOutput(service));
    const project = await projectOnPlan(service);
    const agent = new Agent({ connections: 2 });
    await waitFor("the anvil devnet", async () => (await (await call(service, agent, "blockNumber", project.apiKey)).body.json()) !== null && descendants(service.pid).some((p) => p.command.includes("anvil")));
    await agent.close();
    const children = descendants(service.pid);
    expect(children.some((p) => p.command.includes("postgres")), JSON.stringify(children)).toBe(true);

    service.child.kill("SIGKILL");
    await service.exited;
    await waitFor("every child of the killed service to stop", () => stillRunning(children.map((p) => p.pid)).length === 0, 20_000);
    expect(processesMentioning(dataDir)).toEqual([]);
  });
});
