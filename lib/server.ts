import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { AppError } from "@/lib/errors";
import { componentLogger, type Logger } from "@/lib/log";
import { CLIENT_IP_HEADER, proxyHeaderOf, socketClientIp } from "@/lib/client-ip";
import { getEnv, requestCameThroughProxy, webhookPrivateUrlsAllowed } from "@/lib/env";
import { createGateway, type GatewayOptions } from "@/lib/gateway/router";
import { answerClientError, answerDuringOutage, answerLongUrl, answerNonPathTarget, answerUndecodablePath } from "@/lib/http-refusals";
import { publicMounts } from "@/lib/gateway/mounts";
import { limitsMode } from "@/lib/db/readiness";
import { metricsAccess, metricsHandler, type MetricsAccess } from "@/lib/metrics/endpoint";

export type NextHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** The public API's parts and settings (GatewayOptions) and the server's own. */
export interface HttpServerOptions extends Omit<GatewayOptions, "mounts" | "logger"> {
  host: string;
  port: number;
  /** Next.js request handler for everything that is not a public API path. */
  next?: NextHandler;
  /** Default: the "web" component logger (the gateway logs through a child of it). */
  logger?: Logger;
  /** How long close() lets requests in flight finish before it cuts their connections (default DRAIN_MS). */
  drainMs?: number;
  /** How long close() leaves a keep-alive connection without a request open (default DRAIN_IDLE_MS). */
  drainIdleMs?: number;
  /** Who may read GET /metrics on this port (default: metricsAccess("public"), from the configuration). */
  metrics?: MetricsAccess;
}

/** Requests in flight when the server is asked to stop get this long to finish. */
export const DRAIN_MS = 8000;
/**
 * While draining, a keep-alive connection between requests is closed once its client has sent
 * nothing for this long. Closing it at once cuts a request already on its way (ECONNRESET): 4 in
 * 1,743 under load, 12 of 32 busy connections in lib/server.test.ts.
 */
export const DRAIN_IDLE_MS = 500;

/** The answer a socket is serving, if any (node:http's own field: no public API tells it). */
const inFlight = (socket: Socket) => (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;

export interface RunningServer {
  server: Server;
  url: string;
  /**
   * Stops taking requests and waits for those in flight: their answers, and those of requests
   * that still arrive on open keep-alive connections, carry Connection: close; a keep-alive
   * connection is closed once it went DRAIN_IDLE_MS without a request; open WebSockets are closed
   * with 1001 (Going Away); anything still open after the drain time is cut.
   */
  close(): Promise<void>;
}

/**
 * One HTTP server, one port: public API paths go to the lean gateway router, everything else
 * to Next.js, so an API request never pays for the console's rendering stack.
 */
export async function startHttpServer(options: HttpServerOptions): Promise<RunningServer> {
  const log = options.logger ?? componentLogger("web");
  const { meter, requestLog, keys, limiter, allowance, limits, metering, trustedProxyHops, now } = options;
  const gateway = createGateway({ mounts: publicMounts(), meter, requestLog, keys, limiter, allowance, limits, metering, trustedProxyHops, now, logger: log.child({ component: "gateway" }) });
  const next = options.next;
  const metrics = metricsHandler(options.metrics ?? metricsAccess("public"));
  let closing = false;
  const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 60_000 }, (req, res) => {
    // Draining: answer, then close the connection (Connection: close), so keep-alive clients move on.
    if (closing) res.shouldKeepAlive = false;
    if (answerNonPathTarget(req, res)) return;
    if (answerUndecodablePath(req, res)) return;
    if (gateway(req, res)) return;
    if (metrics(req, res)) return;
    if (answerLongUrl(req, res)) return;
    if (!next) {
      const error = new AppError("WRONG_ENDPOINT", "Not found.");
      res.writeHead(error.status, { ...error.headers, "Content-Type": "application/json" }).end(JSON.stringify(error.toJSON()));
      return;
    }
    if (answerDuringOutage(req, res)) return;
    // Overwrites whatever a client sent under this name.
    req.headers[CLIENT_IP_HEADER] = socketClientIp(req, options.trustedProxyHops ?? 0);
    next(req, res).catch((e: unknown) => {
      log.error({ err: e, method: req.method }, "the console failed to answer a request");
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain" });
      res.end("Internal Server Error");
    });
  });
  server.on("clientError", answerClientError);
  // Private webhook URLs by the local default assume nobody else reaches this server; a request a
  // reverse proxy forwarded says somebody may. Watched (first, before it is served) while that holds.
  const env = getEnv();
  if (env.webhookPrivateUrlsByDefault && webhookPrivateUrlsAllowed(env)) {
    const watch = (req: IncomingMessage) => {
      const header = proxyHeaderOf(req);
      if (header === undefined) return;
      server.off("request", watch).off("upgrade", watch);
      if (requestCameThroughProxy()) {
        log.warn({ header }, `a request came through a reverse proxy (it carried ${header}): webhook URLs may no longer reach private or loopback addresses, which the local default allowed; set WEBHOOK_ALLOW_PRIVATE_URLS=on or off to choose`);
      }
    };
    server.prependListener("request", watch).prependListener("upgrade", watch);
  }
  // WebSockets: the public API's (/cometbft/<network>/websocket); any other upgrade is not served.
  server.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    if (closing) socket.end("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    else if (!gateway.upgrade(req, socket, head)) socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
  });
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await listenOn(server, options.host, options.port);
  const { port } = server.address() as AddressInfo;
  const host = options.host === "0.0.0.0" || options.host === "::" ? "localhost" : options.host;
  return {
    server,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    close: () => {
      closing = true;
      return new Promise<void>((resolve) => {
        // Since Node 19, server.close() also cuts the connections between requests at once, racing
        // a request their client may be sending right then (ECONNRESET); they are let go below instead.
        server.closeIdleConnections = () => undefined;
        server.close(() => {
          clearTimeout(cutoff);
          resolve();
        });
        // WebSockets end as their endpoint says (a close frame), then close by themselves.
        const ending = gateway.shutdown();
        const idleMs = options.drainIdleMs ?? DRAIN_IDLE_MS;
        // A keep-alive socket between requests is closed once its client has sent nothing for
        // idleMs: a request sent meanwhile is answered with Connection: close, and the client closes.
        const release = (socket: Socket) => {
          const timer = setTimeout(() => {
            const res = inFlight(socket);
            if (!res || res.writableEnded) socket.end();
          }, idleMs);
          socket.once("close", () => clearTimeout(timer));
        };
        // One with an answer in flight keeps it: the answer goes out with Connection: close, or,
        // already started, the socket is let go after it.
        for (const socket of sockets) {
          if (ending.has(socket)) continue;
          const res = inFlight(socket);
          if (!res || res.writableEnded) release(socket);
          else if (!res.headersSent) res.shouldKeepAlive = false;
          else res.once("finish", () => release(socket));
        }
        const cutoff = setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, options.drainMs ?? DRAIN_MS);
      });
    },
  };
}

function listenOn(server: Server, host: string, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/**
 * Holds a web process's port while it cannot serve yet (waiting for `npm run db:migrate`), so a
 * load balancer's readiness check hears why instead of finding nothing: GET /api/ready answers 503
 * with the reason, as the console's route does, and any other request 503 UNAVAILABLE with Retry-After.
 */
export async function startWaitingServer(host: string, port: number, reason: () => string): Promise<{ close(): Promise<void> }> {
  const server = createServer((req, res) => {
    res.shouldKeepAlive = false;
    const ready = req.url === "/api/ready";
    const error = new AppError("UNAVAILABLE", `This server is starting: ${reason()}. Please retry shortly.`, { "Retry-After": "5" });
    const body = ready ? JSON.stringify({ status: "not_ready", reason: reason(), limits: limitsMode() }) : error.json;
    res.writeHead(503, { ...(ready ? { "Cache-Control": "no-store" } : error.headers), "Content-Type": "application/json" }).end(body);
  });
  await listenOn(server, host, port);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
