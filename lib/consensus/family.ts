/** The consensus family (CometBFT chains: /rpc and /cometbft, its own index): see lib/chains/family.ts. */
import { indexerWorkers, type ChainFamily } from "@/lib/chains/family";
import { cometbftMount } from "./cometbft/endpoint";
import { startDevnetProducer } from "./devnet/producer";
import { rpcMount } from "./endpoint";
import { recentExamples } from "./examples";
import { consensusClient } from "./family.client";
import { latestHeight, pruneConsensusIndex } from "./store";
import { startUpstreamFollower } from "./upstream/follower";

export const consensusFamily: ChainFamily = {
  id: "consensus",
  client: consensusClient,
  mounts: [rpcMount, cometbftMount],
  workers(networks, context) {
    const { env, databaseUrl } = context;
    const logger = (n: { slug: string }) => context.logger.child({ component: "consensus", network: n.slug });
    return indexerWorkers(networks, context, {
      follower: (n) => startUpstreamFollower(n, { databaseUrl, startHeight: env.UPSTREAM_START_HEIGHT, logger: logger(n) }),
      producer: (n) => startDevnetProducer(n, { databaseUrl, blockTimeMs: env.CONSENSUS_BLOCK_TIME_MS, logger: logger(n) }),
    });
  },
  examples: (network) => recentExamples(network.slug),
  retention: {
    async keepFrom(network, env) {
      const window = BigInt(network.source.kind === "upstream" ? env.CONSENSUS_UPSTREAM_RETAIN_BLOCKS : env.CONSENSUS_DEVNET_RETAIN_BLOCKS);
      const latest = window > 0n ? await latestHeight(network.slug) : null;
      return latest === null ? null : latest - window + 1n;
    },
    prune: (network, below, opts) => pruneConsensusIndex(network.slug, below, opts),
  },
};
