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
}

/** The plans of README.md ("Compute units and plans"). Allowances reset at 00:00 UTC. */
export const PLANS: Record<Plan, PlanLimits> = {
  FREE: { label: "Starter (free)", allowanceCu: 1_000_000, period: "day", cuPerSecond: 300, maxKeys: 1, maxWebhooks: 5 },
  STARTER_PLUS: { label: "Starter Plus", allowanceCu: 100_000_000, period: "month", cuPerSecond: 400, maxKeys: 3, maxWebhooks: 25 },
  DEVELOPER: { label: "Developer", allowanceCu: 450_000_000, period: "month", cuPerSecond: 600, maxKeys: 5, maxWebhooks: 100 },
  BUSINESS: { label: "Business", allowanceCu: 1_600_000_000, period: "month", cuPerSecond: 3000, maxKeys: 10, maxWebhooks: 500 },
  ENTERPRISE: { label: "Enterprise", allowanceCu: null, period: "month", cuPerSecond: null, maxKeys: 100, maxWebhooks: 10_000 },
};

export function isPlan(value: string): value is Plan {
  return Object.hasOwn(PLANS, value);
}
