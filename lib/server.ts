import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { AppError } from "@/lib/errors";
import { componentLogger, type Logger } from "@/lib/log";
import { CLIENT_IP_HEADER, socketClientIp } from "@/lib/client-ip";
import { createGateway } from "@/lib/gateway/router";
import { answerClientError, answerLongUrl, answerNonPathTarget } from "@/lib/http-refusals";
import { publicMounts } from "@/lib/gateway/mounts";
import type { UsageMeter } from "@/lib/usage/meter";

export type NextHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface HttpServerOptions {
  host: string;
  port: number;
  meter: UsageMeter;
  /** Next.js request handler for everything that is not a public API path. */
  next?: NextHandler;
  /** Proxies in front whose X-Forwarded-For entries name the client (TRUSTED_PROXY_HOPS; default 0). */
  trustedProxyHops?: number;
  /** Default: the "web" component logger (the gateway logs through a child of it). */
  logger?: Logger;
}

export interface RunningServer {
  server: Server;
  url: string;
  /** Stops taking requests and waits for those in flight (idle keep-alive sockets are closed). */
  close(): Promise<void>;
}

/**
 * One HTTP server, one port: public API paths go to the lean gateway router, everything else
 * to Next.js, so an API request never pays for the console's rendering stack.
 */
export async function startHttpServer(options: HttpServerOptions): Promise<RunningServer> {
  const log = options.logger ?? componentLogger("web");
  const gateway = createGateway({ mounts: publicMounts, meter: options.meter, logger: log.child({ component: "gateway" }), trustedProxyHops: options.trustedProxyHops });
  const next = options.next;
  const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 60_000 }, (req, res) => {
    if (answerNonPathTarget(req, res)) return;
    if (gateway(req, res)) return;
    if (answerLongUrl(req, res)) return;
    if (!next) {
      const error = new AppError("WRONG_ENDPOINT", "Not found.");
      res.writeHead(error.status, { ...error.headers, "Content-Type": "application/json" }).end(JSON.stringify(error.toJSON()));
      return;
    }
    // Overwrites whatever a client sent under this name.
    req.headers[CLIENT_IP_HEADER] = socketClientIp(req, options.trustedProxyHops ?? 0);
    next(req, res).catch((e: unknown) => {
      log.error({ err: e, method: req.method }, "the console failed to answer a request");
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain" });
      res.end("Internal Server Error");
    });
  });
  server.on("clientError", answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host === "0.0.0.0" || options.host === "::" ? "localhost" : options.host;
  return {
    server,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
