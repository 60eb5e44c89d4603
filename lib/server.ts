import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { AppError } from "@/lib/errors";
import { componentLogger, type Logger } from "@/lib/log";
import { CLIENT_IP_HEADER, proxyHeaderOf, socketClientIp } from "@/lib/client-ip";
import { getEnv, requestCameThroughProxy, webhookPrivateUrlsAllowed } from "@/lib/env";
import { createGateway, type GatewayOptions } from "@/lib/gateway/router";
import { answerProbe, type NotReady, type Probes } from "@/lib/health";
import { answerClientError, answerDuringOutage, answerLongUrl, answerNonPathTarget, answerUndecodablePath } from "@/lib/http-refusals";
import { publicMounts } from "@/lib/gateway/mounts";
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
  /** What the process's other parts say, for GET /readyz (default: running); the server adds its own draining. */
  parts?: () => NotReady | undefined;
  /** How long close() keeps serving, GET /readyz answering 503, before it stops listening (DRAIN_MS; default 0). */
  drainMs?: number;
  /** How long close() then lets requests in flight finish before it cuts their connections (default FINISH_MS). */
  finishMs?: number;
  /** How long close() leaves a keep-alive connection without a request open (default DRAIN_IDLE_MS). */
  drainIdleMs?: number;
  /** Who may read GET /metrics on this port (default: metricsAccess("public"), from the configuration). */
  metrics?: MetricsAccess;
}

/**
 * Requests still in flight once the server stops listening get this long to finish (those in flight
 * when it was told to stop had DRAIN_MS more). Short enough that a stop with the production
 * DRAIN_MS, and the flush and stops after it, fits in the launcher's 10 s.
 */
export const FINISH_MS = 3000;
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
   * Drains, then stops: GET /readyz answers 503 at once while every other request is still served
   * as before for drainMs, so a load balancer stops sending here first. Then it stops listening and
   * waits for the requests in flight: their answers, and those of requests that still arrive on
   * open keep-alive connections, carry Connection: close; a keep-alive connection is closed once it
   * went DRAIN_IDLE_MS without a request; open WebSockets are closed with 1001 (Going Away);
   * anything still open after finishMs is cut. Idempotent.
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
  /** Told to stop: /readyz says so; everything else is served as before. */
  let draining = false;
  /** No longer listening: answers close their connection. */
  let closing = false;
  const probes: Probes = { parts: () => (draining ? { status: "draining" } : options.parts?.()), withLimits: true };
  const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 60_000 }, (req, res) => {
    // Closing: answer, then close the connection (Connection: close), so keep-alive clients move on.
    // Not while draining: a load balancer's pooled connections would churn, and new connections
    // still waiting to be accepted when the listener closes are reset.
    if (closing) res.shouldKeepAlive = false;
    if (answerNonPathTarget(req, res)) return;
    if (answerProbe(req, res, probes)) return;
    if (answerUndecodablePath(req, res)) return;
    if (gateway(req, res)) return;
    if (metrics(req, res)) return;
    if (answerLongUrl(req, res)) return;
    if (!next) {
      sendError(res, new AppError("WRONG_ENDPOINT", "Not found."));
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
  let stopped: Promise<void> | undefined;
  const stop = async () => {
    draining = true;
    if (options.drainMs) await delay(options.drainMs);
    closing = true;
    await new Promise<void>((resolve) => {
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
      }, options.finishMs ?? FINISH_MS);
    });
  };
  return { server, url: urlOf(server, options.host), close: () => (stopped ??= stop()) };
}

/** The URL a server listening on `host` is reached at from this machine. */
function urlOf(server: Server, host: string): string {
  const { port } = server.address() as AddressInfo;
  const name = host === "0.0.0.0" || host === "::" ? "localhost" : host;
  return `http://${name.includes(":") ? `[${name}]` : name}:${port}`;
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

/** A route of a small server: true when it answered the request. */
export type Route = (req: IncomingMessage, res: ServerResponse) => boolean;

export interface SmallServer {
  url: string;
  /** Stops listening and closes every connection at once. */
  close(): Promise<void>;
}

/** A server of a few routes, answering the probes first (when given) and `otherwise` what no route took. */
async function startSmallServer(host: string, port: number, probes: Probes | undefined, routes: readonly Route[], otherwise: (req: IncomingMessage, res: ServerResponse) => void): Promise<SmallServer> {
  const server = createServer((req, res) => {
    if (probes && answerProbe(req, res, probes)) return;
    for (const route of routes) if (route(req, res)) return;
    otherwise(req, res);
  });
  server.on("clientError", answerClientError);
  await listenOn(server, host, port);
  return {
    url: urlOf(server, host),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function sendError(res: ServerResponse, error: AppError): void {
  res.writeHead(error.status, { ...error.headers, "Content-Type": "application/json" }).end(error.json);
}

/**
 * A worker's small HTTP listener (ROLE=worker, WORKER_HTTP_PORT): GET /healthz and /readyz (its
 * parts, as `parts` says, and the database), then `routes` (a scrape endpoint, say), and 404 JSON
 * for anything else.
 */
export function startWorkerHttpServer(options: { host: string; port: number; parts: () => NotReady | undefined; routes?: readonly Route[] }): Promise<SmallServer> {
  const notFound = new AppError("WRONG_ENDPOINT", "Not found.");
  return startSmallServer(options.host, options.port, { parts: options.parts, withLimits: false }, options.routes ?? [], (_req, res) => sendError(res, notFound));
}

/**
 * Holds a web process's port while it cannot serve yet (waiting for `npm run db:migrate`), so a
 * load balancer's readiness check hears why instead of finding nothing: GET /readyz answers 503
 * with the reason, and any other request 503 UNAVAILABLE with Retry-After.
 */
/** A listener of its own for GET /metrics (METRICS_PORT) under `access`; any other path answers 404. */
export function startMetricsServer(host: string, port: number, access: MetricsAccess): Promise<SmallServer> {
  return startSmallServer(host, port, undefined, [metricsHandler(access)], (_req, res) => sendError(res, new AppError("WRONG_ENDPOINT", "Only /metrics is served on this port.")));
}

export function startWaitingServer(host: string, port: number, reason: () => string): Promise<SmallServer> {
  return startSmallServer(host, port, { parts: () => ({ status: "not_ready", reason: reason() }), withLimits: true }, [], (_req, res) => {
    res.shouldKeepAlive = false;
    sendError(res, new AppError("UNAVAILABLE", `This server is starting: ${reason()}. Please retry shortly.`, { "Retry-After": "5" }));
  });
}
