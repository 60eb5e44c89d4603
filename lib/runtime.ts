import path from "node:path";
import { ensureDatabase } from "@/lib/db/connection";
import { connectionBudget, disconnectDb } from "@/lib/db/client";
import { applyMigrations, listMigrations, waitForMigrations } from "@/lib/db/migrate";
import { setExpectedMigrations, setLimitsMode } from "@/lib/db/readiness";
import { joinCluster, type ClusterMembership } from "@/lib/cluster/members";
import { RateLimiter } from "@/lib/gateway/limits";
import { QuotaTracker } from "@/lib/gateway/quota";
import { SharedLimits } from "@/lib/limits/shared";
import { inFamily } from "@/lib/chains/client";
import { runsIn, type ProcessRole } from "@/lib/chains/family";
import { families, familyOf } from "@/lib/chains/registry";
import { loadEnv, setDatabaseUrl, type Env } from "@/lib/env";
import { componentLogger, type Logger } from "@/lib/log";
import { metricsAccess, startMetricsServer } from "@/lib/metrics/endpoint";
import { networks, type Network } from "@/lib/networks";
import { startHttpServer, startWaitingServer, type NextHandler, type RunningServer } from "@/lib/server";
import { createServices, installServices, type Services } from "@/lib/services";
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
  /** What this process's parts were handed (and what its Next.js bundle reads through lib/services.ts). */
  services: Services;
  stop(): Promise<void>;
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
 * for), the HTTP server (ROLE=all|web) and the background workers (ROLE=all|worker:
 * chain followers, webhook delivery). Builds the process's services (lib/services.ts) once and hands
 * them to what it starts; installs them for the code Next.js runs, which cannot be handed them.
 * stop() shuts down in order: stop taking requests, flush usage, stop workers, close the database, stop PostgreSQL.
 * A start-up that fails half-way (the port is taken, say) shuts down what it started the same way.
 */
export async function startService(options: ServiceOptions = {}): Promise<Service> {
  const log = options.logger ?? componentLogger("runtime");
  const env = options.env ?? loadEnv();
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
      : new SharedLimits({ redisUrl: env.REDIS_URL, webProcesses: () => member?.webProcesses() ?? 1, onMode: setLimitsMode, logger: log.child({ component: "limits" }) });
  stops.push(() => limits.stop());
  const services = installServices(createServices(env, limits));
  const { meter: usage, requestLog: requests } = services;
  const shutdown = async () => {
    try {
      await http?.close();
      await usage.stop();
      await requests.stop();
      for (const s of stops.reverse()) await s().catch((e: unknown) => log.error({ err: e }, "a part failed to stop"));
      // What the workers metered as they stopped (webhook deliveries finishing).
      await usage.stop();
      await nextApp?.close().catch(() => undefined);
      await disconnectDb();
    } finally {
      await database.stop();
    }
  };
  try {
    if (env.MIGRATE_ON_START ?? database.embedded) {
      const applied = await applyMigrations(database.url);
      if (applied.length > 0) log.info({ migrations: applied }, `applied ${applied.length} migration(s)`);
    } else {
      // Processes sharing a database do not race to migrate it: `npm run db:migrate` does, once.
      // Meanwhile a web process holds its port to say why it is not ready (GET /api/ready: 503).
      let reason = "";
      let waiting: Promise<{ close(): Promise<void> } | undefined> | undefined;
      await waitForMigrations(database.url, {
        onPending: (status) => {
          reason = `pending migrations: ${[...status.failed, ...status.pending].join(", ")}`;
          log.warn({ pending: status.pending, failed: status.failed }, `waiting for migrations (${status.pending.length} pending${status.failed.length > 0 ? `, ${status.failed.length} failed` : ""}): run npm run db:migrate once for the cluster`);
          if (env.ROLE !== "worker") waiting = startWaitingServer(env.HOST, env.PORT, () => reason).catch(() => undefined);
        },
      }).finally(async () => (await waiting)?.close());
      if (reason) log.info("the migrations are applied; starting");
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
      const delivery = startDelivery({ meter: usage, logger: log.child({ component: "webhook-delivery" }) });
      stops.push(() => delivery.stop());
      startWorkers("worker");
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
  } catch (e) {
    await shutdown().catch((err: unknown) => log.error({ err }, "shutting down after a failed start failed"));
    throw e;
  }

  let stopping: Promise<void> | undefined;
  return {
    env,
    url: http?.url,
    databaseUrl: database.url,
    embeddedDatabase: database.embedded,
    services,
    stop: () => (stopping ??= shutdown()),
  };
}
