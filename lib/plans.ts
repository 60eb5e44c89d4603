import type { Plan } from "@/lib/db/generated/enums";

export interface PlanLimits {
  label: string;
  /** Compute units allowed per period; null: by contract, no fixed allowance. */
  allowanceCu: number | null;
  period: "day" | "month";
  /** Throughput in CU per second. */
  cuPerSecond: number | null;
  maxKeys: number;
  /** Webhook subscriptions per project, all networks together (active or not). */
  maxWebhooks: number;
  /** Messages waiting for delivery (PENDING) per webhook subscription; see lib/webhooks/outbox.ts. */
  maxPendingPerWebhook: number;
  /** Messages waiting for delivery per project, all its subscriptions together. */
  maxPendingPerProject: number;
  /** Blocks one replay call may cover (toBlock - fromBlock + 1). */
  maxReplayBlocks: number;
}

/** The plans of README.md ("Compute units and plans"). Allowances reset at 00:00 UTC. */
export const PLANS: Record<Plan, PlanLimits> = {
  FREE: { label: "Starter (free)", allowanceCu: 1_000_000, period: "day", cuPerSecond: 300, maxKeys: 1, maxWebhooks: 5, maxPendingPerWebhook: 1_000, maxPendingPerProject: 2_000, maxReplayBlocks: 100 },
  STARTER_PLUS: { label: "Starter Plus", allowanceCu: 100_000_000, period: "month", cuPerSecond: 400, maxKeys: 3, maxWebhooks: 25, maxPendingPerWebhook: 5_000, maxPendingPerProject: 20_000, maxReplayBlocks: 1_000 },
  DEVELOPER: { label: "Developer", allowanceCu: 450_000_000, period: "month", cuPerSecond: 600, maxKeys: 5, maxWebhooks: 100, maxPendingPerWebhook: 10_000, maxPendingPerProject: 50_000, maxReplayBlocks: 2_000 },
  BUSINESS: { label: "Business", allowanceCu: 1_600_000_000, period: "month", cuPerSecond: 3000, maxKeys: 10, maxWebhooks: 500, maxPendingPerWebhook: 50_000, maxPendingPerProject: 200_000, maxReplayBlocks: 10_000 },
  ENTERPRISE: { label: "Enterprise", allowanceCu: null, period: "month", cuPerSecond: null, maxKeys: 100, maxWebhooks: 10_000, maxPendingPerWebhook: 100_000, maxPendingPerProject: 1_000_000, maxReplayBlocks: 10_000 },
};

const squash = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, "");

/**
 * The plan a person names: its id in any case (`business`, `STARTER_PLUS`, `starter-plus`) or its
 * label (`Business`, `Starter Plus`, `Starter (free)`, or just `Starter`); undefined otherwise.
 */
export function planFromName(name: string): Plan | undefined {
  const wanted = squash(name);
  if (wanted === "") return undefined;
  for (const [plan, limits] of Object.entries(PLANS) as [Plan, PlanLimits][]) {
    if (squash(plan) === wanted || squash(limits.label) === wanted) return plan;
  }
  return wanted === "starter" ? "FREE" : undefined;
}
