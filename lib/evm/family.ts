/**
 * The EVM family (JSON-RPC at /node, forwarded to upstream nodes or to an anvil devnet per
 * network, LOG webhooks): see lib/chains/family.ts.
 */
import path from "node:path";
import type { ChainFamily, FamilyContext, Stoppable } from "@/lib/chains/family";
import { errorMessage, type Logger } from "@/lib/log";
import { AnvilSupervisor, type DevnetStarted } from "./devnet/anvil";
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
 * Where the node endpoint's requests go (the process's EvmBackends): upstream nodes, or with devnets on
 * an anvil per network, started on first use with its traffic generator.
 */
function startBackends({ env, logger, services }: FamilyContext): Stoppable {
  const log = logger.child({ component: "evm-devnet" });
  const supervisor =
    env.DEVNETS === "on"
      ? new AnvilSupervisor({
          dataDir: path.resolve(env.DATA_DIR, "anvil"),
          blockTimeSec: env.EVM_BLOCK_TIME_S,
          idleMs: env.EVM_DEVNET_IDLE_MS,
          logger: log,
          onStarted: startTraffic(log),
        })
      : undefined;
  services.evm.configure({ supervisor, blockTimeMs: env.EVM_BLOCK_TIME_S * 1000, batchMax: env.UPSTREAM_BATCH_MAX });
  return { stop: async () => supervisor?.stopAll() };
}

export const evmFamily: ChainFamily = {
  id: "evm",
  client: evmClient,
  mounts: [nodeMount],
  // A devnet runs inside the process that serves the node endpoint, and only that process can reach it.
  workers: (_networks, context) => [{ role: "web", start: () => startBackends(context) }],
  examples: evmExamples,
  webhooks: {
    source: (network) => new EvmChainSource(network),
    followerRole: (network) => (network.source.kind === "devnet" ? "web" : "worker"),
  },
};
