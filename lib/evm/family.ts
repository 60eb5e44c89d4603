/**
 * The EVM family (JSON-RPC at /node, forwarded to upstream nodes or to the cluster's anvil devnet
 * per network, LOG webhooks): see lib/chains/family.ts.
 */
import path from "node:path";
import type { ChainFamily, FamilyContext, FamilyWorker, Stoppable } from "@/lib/chains/family";
import { errorMessage, type Logger } from "@/lib/log";
import type { Network } from "@/lib/networks";
import type { DevnetStarted } from "./devnet/anvil";
import { advertisedHost, DevnetDirectory, startDevnetHosts } from "./devnet/cluster";
import { startTrafficGenerator } from "./devnet/traffic";
import { evmExamples } from "./examples";
import { evmClient } from "./family.client";
import { nodeMount } from "./node-endpoint";
import { EvmChainSource } from "./webhooks";

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
 * Where this process's EVM calls go (its EvmBackends): upstream nodes, or with devnets on the
 * devnet each network's holder registered (lib/evm/devnet/cluster.ts).
 */
function configureBackends({ env, databaseUrl, logger, services }: FamilyContext): Stoppable {
  const devnets = env.DEVNETS === "on" ? new DevnetDirectory({ databaseUrl, idleMs: env.EVM_DEVNET_IDLE_MS, logger: logger.child({ component: "evm-devnet" }) }) : undefined;
  services.evm.configure({ devnets, blockTimeMs: env.EVM_BLOCK_TIME_S * 1000, batchMax: env.UPSTREAM_BATCH_MAX });
  return { stop: async () => devnets?.stop() };
}

/** The devnets of the networks without an upstream, run by a worker process each (with their traffic generators). */
function hostDevnets(networks: readonly Network[], { env, databaseUrl, logger, memberId }: FamilyContext): Stoppable {
  const log = logger.child({ component: "evm-devnet" });
  return startDevnetHosts(
    networks.filter((n) => n.source.kind === "devnet"),
    {
      databaseUrl,
      memberId,
      dataDir: path.resolve(env.DATA_DIR, "anvil"),
      blockTimeSec: env.EVM_BLOCK_TIME_S,
      idleMs: env.EVM_DEVNET_IDLE_MS,
      saveBlocks: env.EVM_DEVNET_SAVE_BLOCKS,
      retainBlocks: env.EVM_DEVNET_RETAIN_BLOCKS,
      host: env.DEVNET_HOST,
      advertiseHost: advertisedHost(env),
      logger: log,
      onStarted: startTraffic(log),
    },
  );
}

export const evmFamily: ChainFamily = {
  id: "evm",
  client: evmClient,
  mounts: [nodeMount],
  workers(networks, context) {
    // Every process reaches the devnets through the database (the node endpoint, the followers);
    // ROLE=all configures its backends once, as a web process.
    const workers: FamilyWorker[] = [{ role: "web", start: () => configureBackends(context) }];
    if (context.env.ROLE === "worker") workers.push({ role: "worker", start: () => configureBackends(context) });
    if (context.env.DEVNETS === "on") workers.push({ role: "worker", start: () => hostDevnets(networks, context) });
    return workers;
  },
  examples: evmExamples,
  webhooks: {
    source: (network) => new EvmChainSource(network),
    followerRole: () => "worker",
  },
};
