import path from "node:path";
import { ensureDatabase } from "@/lib/db/connection";
import { connectionBudget, disconnectDb } from "@/lib/db/client";
import { applyMigrations, listMigrations, waitForMigrations } from "@/lib/db/migrate";
import { joinCluster, type ClusterMembership } from "@/lib/cluster/members";
import { RateLimiter } from "@/lib/gateway/limits";
import { QuotaTracker } from "@/lib/gateway/quota";
import { SharedLimits } from "@/lib/limits/shared";
import { inFamily } from "@/lib/chains/client";
import { runsIn, type ProcessRole } from "@/lib/chains/family";
import { families, familyOf } from "@/lib/chains/registry";
import { startRetention } from "@/lib/chains/retention";
import { loadEnv, setDatabaseUrl, type Env } from "@/lib/env";
import { setExpectedMigrations, setLimitsMode, type NotReady } from "@/lib/health";
import { componentLogger, type Logger } from "@/lib/log";
import { metricsAccess, metricsHandler } from "@/lib/metrics/endpoint";
import { networks, type Network } from "@/lib/networks";
import { startHttpServer, startMetricsServer, startWaitingServer, startWorkerHttpServer, type NextHandler, type RunningServer, type SmallServer } from "@/lib/server";
import { createServices, installServices, type Services } from "@/lib/services";
import { startTracing, stopTracing } from "@/lib/tracing";
import { startWebhookEngine } from "@/lib/webhooks/engine/follower";
import { startDelivery } from "@/lib/webhooks/delivery/worker";

export interface ServiceOptions {
  /** The configuration, when the caller has loaded it (loadEnv()); loaded here otherwise. */
  env?: Env;
  /** Serve the console through Next.js (false: public API only, for tests and ROLE=worker). */
  withNext?: boolean;
  dev?: boolean;
  /** Default: the "runtime" component logger; workers and devnets log through children of it. */
  logger?: Logger;
}

export interface Service {
  env: Env;
  url: string | undefined;
  databaseUrl: string;
  embeddedDatabase: boolean;
  /** Where a ROLE=worker process answers GET /healthz and /readyz (WORKER_HTTP_PORT), if anywhere. */
  workerHttpUrl: string | undefined;
  /** What this process's parts were handed (and what its Next.js bundle reads through lib/services.ts). */
  services: Services;
  stop(): Promise<void>;
}

/**
 * The most a stop (SIGTERM, SIGINT) may take before the launcher exits anyway: the drain, then
 * FINISH_MS (3 s) for requests in flight and 2 s for the flush and the parts' stops; never below
 * 10 s (a worker's webhook deliveries in flight finish meanwhile).
 */
export function shutdownBoundMs(env: Env): number {
  return Math.max(10_000, env.DRAIN_MS + 5000);
}

async function loadNext(env: Env, dev: boolean): Promise<{ handler: NextHandler; close(): Promise<void> }> {
  const { default: next } = await import("next");
  const app = next({ dev, dir: path.resolve("."), hostname: env.HOST, port: env.PORT });
  await app.prepare();
  const handle = app.getRequestHandler();
  return { handler: (req, res) => handle(req, res), close: () => app.close() };
}

/**
 * The composition root. Starts everything one process runs: database (embedded when DATABASE_URL
 * is unset), migrations (applied for the embedded database or MIGRATE_ON_START; otherwise waited
 * for), the HTTP server (ROLE=all|web), or a worker's small listener for its probes
 * (WORKER_HTTP_PORT), and the background workers (ROLE=all|worker: chain followers, webhook
 * delivery, retention). Builds the process's services (lib/services.ts) once and hands them to what it starts;
 * installs them for the code Next.js runs, which cannot be handed them. GET /readyz answers 200 once
 * all of it runs. stop() shuts down in order: /readyz 503 and DRAIN_MS more of serving, stop taking
 * requests, flush usage, stop workers, close the database, stop PostgreSQL. A start-up that fails
 * half-way (the port is taken, say) shuts down what it started the same way. Tracing
 * (lib/tracing.ts) starts before everything else and sends the last spans after everything stopped.
 */
export async function startService(options: ServiceOptions = {}): Promise<Service> {
  const log = options.logger ?? componentLogger("runtime");
  const env = options.env ?? loadEnv();
  // First, so that everything started below is traced (OTEL_EXPORTER_OTLP_ENDPOINT; off: nothing loaded).
  await startTracing(env);
  const database = await ensureDatabase({ log: (m) => log.info({ component: "embedded-postgres" }, m) });
  setDatabaseUrl(database.url);

  const stops: Array<() => Promise<void>> = [];
  let http: RunningServer | undefined;
  let nextApp: Awaited<ReturnType<typeof loadNext>> | undefined;
  // Limits the web processes hold together, shared through Redis (local in a worker, which holds none).
  let member: ClusterMembership | undefined;
  const limits =
    env.ROLE === "worker"
      ? new SharedLimits()
      : new SharedLimits({ redisUrl: env.REDIS_URL, member: () => member, onMode: setLimitsMode, logger: log.child({ component: "limits" }) });
  stops.push(() => limits.stop());
  const services = installServices(createServices(env, limits));
  const { meter: usage, requestLog: requests } = services;
  // Why this process cannot do its work yet, or no longer: GET /readyz answers 503 with it.
  let parts: NotReady | undefined = { status: "not_ready", reason: "starting" };
  let workerHttp: SmallServer | undefined;
  const shutdown = async () => {
    parts = { status: "draining" };
    try {
      await http?.close();
      await usage.stop();
      await requests.stop();
      for (const s of stops.reverse()) await s().catch((e: unknown) => log.error({ err: e }, "a part failed to stop"));
      // What the workers metered as they stopped (webhook deliveries finishing).
      await usage.stop();
      await nextApp?.close().catch(() => undefined);
      await workerHttp?.close();
      await disconnectDb();
    } finally {
      // The tracing SDK last: it sends the spans of the shutdown too.
      await database.stop().finally(stopTracing);
    }
  };
  try {
    if (env.ROLE === "worker" && env.WORKER_HTTP_PORT !== undefined) {
      // Its metrics too: the listener is the worker's own, reached by the operator's network (like METRICS_PORT).
      const routes = [metricsHandler(metricsAccess("private", env))];
      workerHttp = await startWorkerHttpServer({ host: env.WORKER_HTTP_HOST, port: env.WORKER_HTTP_PORT, parts: () => parts, routes });
      log.info(`answering GET /healthz, /readyz and /metrics at ${workerHttp.url}`);
    }
    if (env.MIGRATE_ON_START ?? database.embedded) {
      const applied = await applyMigrations(database.url);
      if (applied.length > 0) log.info({ migrations: applied }, `applied ${applied.length} migration(s)`);
    } else {
      // Processes sharing a database do not race to migrate it: `npm run db:migrate` does, once.
      // Meanwhile a web process holds its port to say why it is not ready (GET /readyz: 503).
      let reason = "";
      let waiting: Promise<{ close(): Promise<void> } | undefined> | undefined;
      await waitForMigrations(database.url, {
        onPending: (status) => {
          reason = `pending migrations: ${[...status.failed, ...status.pending].join(", ")}`;
          parts = { status: "not_ready", reason };
          log.warn({ pending: status.pending, failed: status.failed }, `waiting for migrations (${status.pending.length} pending${status.failed.length > 0 ? `, ${status.failed.length} failed` : ""}): run npm run db:migrate once for the cluster`);
          if (env.ROLE !== "worker") waiting = startWaitingServer(env.HOST, env.PORT, () => reason).catch(() => undefined);
        },
      }).finally(async () => (await waiting)?.close());
      if (reason) {
        parts = { status: "not_ready", reason: "starting" };
        log.info("the migrations are applied; starting");
      }
    }
    setExpectedMigrations(await listMigrations());
    const invalidations = services.keyVerifier.listen(database.url);
    stops.push(() => invalidations.stop());
    const joined = (member = await joinCluster({ role: env.ROLE }));
    stops.push(() => joined.stop());
    log.info(`database connections: at most ${connectionBudget(env)}, and one per leader lock held`);
    if (env.METRICS_PORT !== undefined) {
      const metrics = await startMetricsServer(env.METRICS_HOST ?? env.HOST, env.METRICS_PORT, metricsAccess("private", env));
      stops.push(() => metrics.close());
      log.info(`metrics at ${metrics.url}/metrics`);
    }
    // What the chain families run (indexers, devnets), each in the processes of its role.
    const context = { env, databaseUrl: database.url, logger: log, services, memberId: joined.id };
    const workers = families().flatMap((f) => f.workers?.(networks().filter(inFamily(f.id)), context) ?? []);
    const startWorkers = (role: ProcessRole) => {
      for (const w of workers) {
        if (w.role !== role) continue;
        const handle = w.start();
        stops.push(() => handle.stop());
      }
    };
    if (env.ROLE !== "web") {
      // Webhook deliveries, metered through the process's meter (flushed here in ROLE=worker too).
      usage.start(env.USAGE_FLUSH_MS);
      const delivery = startDelivery({ meter: usage, logger: log.child({ component: "webhook-delivery" }), member: joined });
      stops.push(() => delivery.stop());
      startWorkers("worker");
      const targets = families().flatMap((f) => (f.retention ? networks().filter(inFamily(f.id)).map((network) => ({ network, retention: f.retention! })) : []));
      const retention = startRetention({ databaseUrl: database.url, env, targets, logger: log.child({ component: "retention" }) });
      stops.push(() => retention.stop());
    }
    if (env.ROLE !== "worker") {
      startWorkers("web");
      if (options.withNext ?? true) nextApp = await loadNext(env, options.dev ?? false);
      usage.start(env.USAGE_FLUSH_MS);
      if (env.REQUEST_LOG === "on") requests.start(env.USAGE_FLUSH_MS);
      http = await startHttpServer({
        host: env.HOST,
        port: env.PORT,
        keys: services.keyVerifier,
        meter: usage,
        limiter: new RateLimiter(limits),
        allowance: new QuotaTracker(Date.now, limits),
        limits,
        metering: env.USAGE_METERING === "on",
        requestLog: env.REQUEST_LOG === "on" ? requests : undefined,
        next: nextApp?.handler,
        trustedProxyHops: env.TRUSTED_PROXY_HOPS,
        parts: () => parts,
        drainMs: env.DRAIN_MS,
      });
    }
    // Webhook followers: a network is followed by the role its family names (the one that can
    // reach its chain). Without devnets (DEVNETS=off) a network with no upstream has no chain to follow.
    const reachable = (n: Network) => n.source.kind === "upstream" || env.DEVNETS === "on";
    const follows = (n: Network) => {
      const webhooks = familyOf(n)?.webhooks;
      return webhooks !== undefined && reachable(n) && runsIn(webhooks.followerRole(n), env);
    };
    if (env.ROLE !== "web" || networks().some(follows)) {
      const engine = startWebhookEngine({ databaseUrl: database.url, include: follows, logger: log.child({ component: "webhooks" }) });
      stops.push(() => engine.stop());
    }
    parts = undefined;
  } catch (e) {
    await shutdown().catch((err: unknown) => log.error({ err }, "shutting down after a failed start failed"));
    throw e;
  }

  let stopping: Promise<void> | undefined;
  return {
    env,
    url: http?.url,
    workerHttpUrl: workerHttp?.url,
    databaseUrl: database.url,
    embeddedDatabase: database.embedded,
    services,
    stop: () => (stopping ??= shutdown()),
  };
}
