/**
 * A chain family (CometBFT consensus, EVM, Aptos): everything the rest of the system asks of one,
 * implemented in the family's own folder (lib/consensus/family.ts, lib/evm/family.ts,
 * lib/aptos/family.ts) and listed once, in lib/chains/registry.ts. The runtime, the gateway's
 * mounts, the webhook engine, the playground's examples route, the Overview and the playground
 * read the registry; none of them names a family.
 */
import type { Env } from "@/lib/env";
import type { Mount } from "@/lib/gateway/types";
import type { Logger } from "@/lib/log";
import type { Network } from "@/lib/networks";
import type { ChainSource } from "@/lib/webhooks/engine/source";
import type { Services } from "@/lib/services";
import type { LeaderTerm } from "@/lib/workers/leader-lock";
import type { ClientFamily } from "./descriptor";

/**
 * Where a worker runs: "web", in the process that serves HTTP (ROLE all or web), or "worker",
 * in the background role (ROLE all or worker).
 */
export type ProcessRole = "web" | "worker";

/** Whether a process of this ROLE runs what belongs to `role`. */
export function runsIn(role: ProcessRole, env: Pick<Env, "ROLE">): boolean {
  return env.ROLE === "all" || env.ROLE === role;
}

export interface FamilyContext {
  env: Env;
  databaseUrl: string;
  /** The runtime's logger: a family logs through children of it. */
  logger: Logger;
  /** The process's services (lib/services.ts), those its gateway and console use. */
  services: Services;
  /** This process's cluster_members id (lib/cluster/members.ts). */
  memberId: string;
}

export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * How far back a family keeps a network's index, and how its oldest blocks go: what the retention
 * worker (lib/chains/retention.ts) applies to each network of the family.
 */
export interface IndexRetention {
  /** The lowest height the network's index is to keep now, by its window in `env`; null keeps everything (no window, or nothing stored). */
  keepFrom(network: Network, env: Env): Promise<bigint | null>;
  /**
   * Removes the network's oldest blocks below `below`, at most `maxBlocks` of them, with what is
   * stored with them, in one transaction fenced by `term` (lib/workers/leader-lock.ts): a block is
   * readable whole or gone. Answers how many blocks and rows went.
   */
  prune(network: Network, below: bigint, opts: { maxBlocks: number; term?: LeaderTerm }): Promise<{ blocks: number; rows: number }>;
}

/** Something a family runs in the background, started by the processes of its role. */
export interface FamilyWorker {
  role: ProcessRole;
  start(): Stoppable;
}

export interface ChainFamily {
  /** As networks name their family (lib/network-definitions.ts). */
  readonly id: string;
  /** What the browser knows of the family: Overview entries, the playground tab with its CU catalog. */
  readonly client: ClientFamily;
  /** Its public API, mounted by the gateway at `/<prefix>/...`. */
  readonly mounts: readonly Mount[];
  /**
   * What it runs for its networks of this catalog (their indexers: devnet producers, upstream
   * followers; the EVM devnets), honouring DEVNETS; the runtime starts the ones of its ROLE.
   */
  workers?(networks: readonly Network[], context: FamilyContext): FamilyWorker[];
  /** The playground's example values for a network, read from its chain or index (shaped as the client descriptor reads them). */
  examples?(network: Network): Promise<unknown>;
  /** How its index stays bounded: without it, the family keeps no index of its own (or never prunes it). */
  readonly retention?: IndexRetention;
  /** Its webhook part: without it, its networks have no webhooks followed. */
  readonly webhooks?: {
    /** A new chain source of the network (the engine keeps one per network). */
    source(network: Network): ChainSource;
    /** The role whose processes follow the network: the one that can reach its chain. */
    followerRole(network: Network): ProcessRole;
  };
}

/**
 * The indexer of each network with one: its upstream follower, or (devnets on) its devnet
 * producer, in the background role. What a family that keeps its own index runs.
 */
export function indexerWorkers(
  networks: readonly Network[],
  context: FamilyContext,
  start: { follower(network: Network): Stoppable; producer(network: Network): Stoppable },
): FamilyWorker[] {
  return networks.flatMap((n): FamilyWorker[] => {
    if (n.source.kind === "upstream") return [{ role: "worker", start: () => start.follower(n) }];
    return context.env.DEVNETS === "on" ? [{ role: "worker", start: () => start.producer(n) }] : [];
  });
}
