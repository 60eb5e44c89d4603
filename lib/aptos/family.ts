/** The Move family (Aptos: the fullnode REST read API at /aptos, its own index, TRANSACTION webhooks): see lib/chains/family.ts. */
import { indexerWorkers, type ChainFamily } from "@/lib/chains/family";
import { startAptosDevnetProducer } from "./devnet/producer";
import { aptosMount } from "./endpoint";
import { aptosExamples } from "./examples";
import { aptosClient } from "./family.client";
import { startAptosFollower } from "./upstream/follower";
import { aptosChainSource } from "./webhooks";

export const aptosFamily: ChainFamily = {
  id: "move",
  client: aptosClient,
  mounts: [aptosMount],
  workers(networks, context) {
    const { env, databaseUrl } = context;
    const logger = (n: { slug: string }) => context.logger.child({ component: "aptos", network: n.slug });
    return indexerWorkers(networks, context, {
      follower: (n) => startAptosFollower(n, { databaseUrl, startHeight: env.UPSTREAM_START_HEIGHT, logger: logger(n) }),
      producer: (n) => startAptosDevnetProducer(n, { databaseUrl, blockTimeMs: env.APTOS_BLOCK_TIME_MS, keepBlocks: env.APTOS_DEVNET_KEEP_BLOCKS, logger: logger(n) }),
    });
  },
  examples: (network) => aptosExamples(network.slug),
  webhooks: {
    source: aptosChainSource,
    // Its index is in the database: any process reaches it.
    followerRole: () => "worker",
  },
};
