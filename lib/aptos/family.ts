/** The Move family (Aptos: the fullnode REST read API at /aptos, its own index, TRANSACTION webhooks): see lib/chains/family.ts. */
import { indexerWorkers, type ChainFamily } from "@/lib/chains/family";
import { startAptosDevnetProducer } from "./devnet/producer";
import { aptosMount } from "./endpoint";
import { aptosExamples } from "./examples";
import { aptosClient } from "./family.client";
import { startAptosFollower } from "./upstream/follower";
import { aptosHead, blockByVersion, pruneAptosIndex } from "./store";
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
      producer: (n) => startAptosDevnetProducer(n, { databaseUrl, blockTimeMs: env.APTOS_BLOCK_TIME_MS, logger: logger(n) }),
    });
  },
  examples: (network) => aptosExamples(network.slug),
  retention: {
    // A devnet keeps a number of blocks; an upstream's index a number of transactions, whole blocks at a time.
    async keepFrom(network, env) {
      const upstream = network.source.kind === "upstream";
      const window = BigInt(upstream ? env.APTOS_UPSTREAM_RETAIN_VERSIONS : env.APTOS_DEVNET_KEEP_BLOCKS);
      const head = window > 0n ? await aptosHead(network.slug) : null;
      if (!head) return null;
      if (!upstream) return head.latest.height - window + 1n;
      const oldest = head.latest.lastVersion - window + 1n;
      return oldest <= head.earliest.firstVersion ? null : ((await blockByVersion(network.slug, oldest))?.height ?? null);
    },
    prune: (network, below, opts) => pruneAptosIndex(network.slug, below, opts),
  },
  webhooks: {
    source: aptosChainSource,
    // Its index is in the database: any process reaches it.
    followerRole: () => "worker",
  },
};
