import { connect, createServer, type Socket } from "node:net";
import { afterAll, beforeAll } from "vitest";
import { disconnectDb } from "@/lib/db/client";
import { setDatabaseUrl } from "@/lib/env";
import { connectTestDatabase } from "./harness";

/**
 * A TCP proxy in front of a real server (PostgreSQL in the tests that use it), for faults that are
 * hard to cause at the right moment with the server itself: refusing every connection (the server
 * is gone), or cutting a connection just after the server sent a given reply, before the client
 * reads it (the server did the work; the client never hears of it), or leaving the connections
 * open while nothing passes through them any more (a half-open connection: the peer vanished).
 */
export interface FaultProxy {
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  via(url: string): string;
  /** Cuts every open connection and closes each new one at once, until pass(). */
  refuse(): void;
  /** Lets nothing through the connections open now, in either direction, without closing them; new ones pass. */
  freeze(): void;
  pass(): void;
  /**
   * Arms a cut: the next server reply containing `marker` is dropped and its connection cut on both
   * sides. Resolves once that happened.
   */
  cutAfterReply(marker: string): Promise<void>;
  close(): Promise<void>;
}

export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const open = new Set<Socket>();
  let refusing = false;
  /** Sockets whose data is dropped (freeze). */
  const frozen = new WeakSet<Socket>();
  let armed: { marker: Buffer; done: () => void } | undefined;

  const server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", () => {
      open.delete(client);
      upstream.destroy();
    });
    upstream.on("close", () => {
      open.delete(upstream);
      client.destroy();
    });
    client.on("error", cut);
    upstream.on("error", cut);
    client.on("data", (chunk: Buffer) => {
      if (!frozen.has(client)) upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (frozen.has(upstream)) return;
      if (armed && chunk.includes(armed.marker)) {
        const { done } = armed;
        armed = undefined;
        cut();
        done();
        return;
      }
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("the proxy has no address");
  const port = address.port;

  return {
    port,
    via(url) {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    refuse() {
      refusing = true;
      for (const socket of open) socket.destroy();
    },
    pass() {
      refusing = false;
    },
    freeze() {
      for (const socket of open) frozen.add(socket);
    },
    cutAfterReply(marker) {
      return new Promise<void>((resolve) => {
        armed = { marker: Buffer.from(marker), done: resolve };
      });
    },
    close() {
      for (const socket of open) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * For a test file whose database must go away and come back: before its tests, this process is
 * pointed at the run's PostgreSQL through a fault proxy (after connectTestDatabase); after them,
 * it disconnects and the proxy closes. `proxy()` is the proxy, once the tests run.
 */
export function faultProxyDatabase(): { proxy(): FaultProxy } {
  let proxy: FaultProxy | undefined;
  beforeAll(async () => {
    const url = new URL(await connectTestDatabase());
    proxy = await startFaultProxy({ host: url.hostname, port: Number(url.port) });
    setDatabaseUrl(proxy.via(url.toString()));
  });
  afterAll(async () => {
    await disconnectDb();
    await proxy?.close();
  });
  return {
    proxy() {
      if (!proxy) throw new Error("the fault proxy starts in beforeAll");
      return proxy;
    },
  };
}
