/**
 * What the webhook engine asks of a chain: its head, block headers (to follow it and to see
 * reorganisations), the BLOCK_PERIOD message of a block, and the LOG or TRANSACTION messages a set
 * of subscriptions match in a block: a chain family's webhook part (lib/chains/family.ts), in its
 * own folder: EVM (lib/evm/webhooks.ts, over the network's anvil devnet or upstream nodes) and Aptos
 * (lib/aptos/webhooks.ts, over the index lib/aptos keeps). The engine (followers, finality, reorgs,
 * outbox) is family-agnostic.
 */
import type { Network } from "@/lib/networks";
import type { WebhookEventType } from "../types";

/** A block as the follower tracks it. */
export interface ChainBlockRef {
  number: bigint;
  /** 0x-prefixed, lower case. */
  hash: string;
  parentHash: string;
  /** Block time, seconds since the Unix epoch (Aptos: the block's µs timestamp / 1e6, floored). */
  timestamp: number;
}

/** An active subscription of the network, as matchers need it (condition already normalised). */
export interface MatchableSubscription {
  id: string;
  eventType: WebhookEventType;
  /** LOG: { address, topics }; TRANSACTION: { payloadFunction, eventType, eventAccountAddress, eventData }. */
  condition: unknown;
}

/** What one subscription matched in one block: the `messages` of one delivered message, in chain order. */
export interface BlockMatch {
  subscriptionId: string;
  messages: unknown[];
}

/** The matches of one block of a range (blocks without any match are left out). */
export interface RangeMatch {
  number: bigint;
  hash: string;
  matches: BlockMatch[];
}

/**
 * The chain's node refused or answered something the source cannot read (a JSON-RPC error, a
 * missing field). Like an unreachable node, a failure of the outside: the follower retries it.
 */
export class ChainSourceError extends Error {
  override name = "ChainSourceError";
}

/**
 * Built once from a set of subscriptions, so that matching a block costs about the block's size,
 * not the number of subscriptions: LOG indexed by (address, topic0), TRANSACTION by payload
 * function and by (event type, event account address). A follower then applies each change to one
 * subscription with put or remove, at a cost that does not grow with the number indexed either.
 */
export interface Matcher {
  /** Indexes a subscription in place of the one of its id (one of a kind this matcher does not match is only taken out). */
  put(subscription: MatchableSubscription): void;
  /** Takes a subscription out (nothing when there is none of that id). */
  remove(id: string): void;
  /** Matches of the block; one entry per subscription with at least one match. */
  match(block: ChainBlockRef, signal: AbortSignal): Promise<BlockMatch[]>;
  /**
   * Matches of every block from..to (inclusive) of the chain as it is now, in chain order: for
   * replay and preview, where asking for each block alone would cost a request per block. Optional:
   * without it the engine calls block() and match() for each height.
   */
  matchRange?(from: bigint, to: bigint, signal: AbortSignal): Promise<RangeMatch[]>;
}

export interface ChainSource {
  readonly network: Network;
  /**
   * Blocks this many below the head are final: isInstant false delivers only those. 0 means final
   * at commit (Aptos), where isInstant makes no difference.
   */
  readonly finalityDepth: number;
  /** Whether blocks at the head can be replaced (EVM): the engine then checks parent hashes. */
  readonly reorgs: boolean;
  /** The newest block's number, or null when the chain has none yet (or is not reachable: throw). */
  head(signal: AbortSignal): Promise<bigint | null>;
  /** The block at a height, or null when the chain does not have it (yet, or any more). */
  block(number: bigint, signal: AbortSignal): Promise<ChainBlockRef | null>;
  /**
   * The oldest block the chain still has, for a chain that forgets its old blocks (an index kept
   * to a window, lib/chains/retention.ts): a stream left below it goes on from there. Without it,
   * a missing block is waited for.
   */
  oldest?(signal: AbortSignal): Promise<bigint | null>;
  /** The BLOCK_PERIOD message of a block, in the family's documented shape. */
  blockPeriodMessage(block: ChainBlockRef, signal: AbortSignal): Promise<unknown>;
  /** A matcher for these subscriptions (all LOG, or all TRANSACTION, of this network). */
  matcher(subscriptions: readonly MatchableSubscription[]): Matcher;
  /**
   * A sample event of each kind for "Send test" (a `messages` item, or the block for BLOCK_PERIOD),
   * from the chain as it is now. With the subscription's condition, a sample that looks like what
   * it will receive (EVM LOG: its address and topics).
   */
  sample(eventType: WebhookEventType, signal: AbortSignal, condition?: unknown): Promise<unknown>;
}

/**
 * The chain source of each network, kept because sources cache recent blocks: one set per process
 * (lib/services.ts), shared by the followers and the console's preview, "Send test" and replay.
 */
export class ChainSources {
  private readonly known = new Map<string, ChainSource>();

  /** The network's source, made by `make` unless made already for the network as the catalog has it now (an upstream configured since rebuilds it). */
  get(network: Network, make: (network: Network) => ChainSource): ChainSource {
    const known = this.known.get(network.slug);
    if (known && known.network === network) return known;
    const source = make(network);
    this.known.set(network.slug, source);
    return source;
  }
}
