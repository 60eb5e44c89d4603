import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectTestDatabase } from "@/lib/testing/harness";
import { freePort } from "@/lib/testing/ports";
import { listen, RECONNECT_MS } from "./listen";

let databaseUrl: string;
let sender: pg.Client;

beforeAll(async () => {
  databaseUrl = await connectTestDatabase();
  sender = new pg.Client({ connectionString: databaseUrl });
  await sender.connect();
});

afterAll(async () => {
  await sender.end();
});

const notify = (channel: string, payload: string) => sender.query("SELECT pg_notify($1, $2)", [channel, payload]);

async function waitFor(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !check(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

describe("listen", () => {
  it("hears notifications on its channel only, in order, and nothing once stopped", async () => {
    const heard: string[] = [];
    const listening = listen({ connectionString: databaseUrl, channel: "test_listen_a", name: "listen test", onNotification: (p) => heard.push(p) });
    await listening.ready;
    await notify("test_listen_a", "one");
    await notify("test_listen_other", "not this");
    await notify("test_listen_a", "");
    await notify("test_listen_a", "three");
    await waitFor("three notifications", () => heard.length === 3);
    expect(heard).toEqual(["one", "", "three"]);

    await listening.stop();
    await notify("test_listen_a", "after stop");
    await new Promise((r) => setTimeout(r, 200));
    expect(heard).toEqual(["one", "", "three"]);
    const sessions = await sender.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1", [`blockgate listen test (pid ${process.pid})`]);
    expect(sessions.rows[0].n).toBe(0);
  });

  it("reports a lost connection once, listens again after RECONNECT_MS, and says the outage came before", async () => {
    const heard: string[] = [];
    const events: string[] = [];
    const listening = listen({
      connectionString: databaseUrl,
      channel: "test_listen_b",
      name: "listen test b",
      onNotification: (p) => heard.push(p),
      onListening: (afterOutage) => events.push(`listening${afterOutage ? " after outage" : ""}`),
      onLost: (_e, wasUp) => events.push(`lost${wasUp ? " (was up)" : ""}`),
    });
    try {
      await listening.ready;
      expect(events).toEqual(["listening"]);
      await sender.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [`blockgate listen test b (pid ${process.pid})`]);
      await waitFor("the reconnection", () => events.length === 3, 5 * RECONNECT_MS);
      expect(events).toEqual(["listening", "lost (was up)", "listening after outage"]);
      await notify("test_listen_b", "again");
      await waitFor("the notification after reconnecting", () => heard.includes("again"));
    } finally {
      await listening.stop();
    }
  });

  it("with retryFirst false, rejects ready when the database cannot be reached and does not retry", async () => {
    const port = await freePort();
    let attempts = 0;
    const listening = listen({
      connectionString: () => {
        attempts++;
        return `postgresql://nobody@127.0.0.1:${port}/none`;
      },
      channel: "test_listen_c",
      name: "listen test c",
      retryFirst: false,
      onNotification: () => undefined,
    });
    await expect(listening.ready).rejects.toThrow(/ECONNREFUSED/);
    await new Promise((r) => setTimeout(r, RECONNECT_MS * 1.5));
    expect(attempts).toBe(1);
    await listening.stop();
  });

  it("by default keeps retrying a database that is not there yet; ready settles after the first attempt", async () => {
    const port = await freePort();
    let attempts = 0;
    const lost: boolean[] = [];
    const listening = listen({
      connectionString: () => {
        attempts++;
        return `postgresql://nobody@127.0.0.1:${port}/none`;
      },
      channel: "test_listen_d",
      name: "listen test d",
      onNotification: () => undefined,
      onLost: (_e, wasUp) => lost.push(wasUp),
    });
    await listening.ready;
    await waitFor("a second attempt", () => attempts >= 2, 5 * RECONNECT_MS);
    expect(lost).toEqual([false]);
    await listening.stop();
    const after = attempts;
    await new Promise((r) => setTimeout(r, RECONNECT_MS * 1.5));
    expect(attempts).toBe(after);
  });

  it("refuses a channel name that is not a plain identifier", () => {
    expect(() => listen({ connectionString: databaseUrl, channel: "x; DROP TABLE users", name: "bad", onNotification: () => undefined })).toThrow(/lower-case SQL identifier/);
  });
});
