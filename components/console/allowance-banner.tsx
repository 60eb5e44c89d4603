import Link from "next/link";
import { formatDateTime, formatNumber } from "@/components/ui/format";
import { db } from "@/lib/db/client";
import type { Plan } from "@/lib/db/generated/enums";
import { overageApplies } from "@/lib/gateway/quota";
import { allowanceOf } from "@/lib/usage/query";

/** Share of the allowance from which the console warns. */
export const WARN_AT = 0.8;

/**
 * On every page of a project that used 80 % or more of its plan's allowance this period (read
 * from the daily rollup, as the gateway's quota check does): how much, when it resets, and a link
 * to the Plans page. Nothing below 80 %, and nothing for a plan without a fixed allowance.
 */
export async function AllowanceBanner({ project }: { project: { id: string; plan: Plan } }) {
  const allowance = await allowanceOf(project.id, project.plan);
  if (allowance.allowanceCu === null || allowance.usedCu < allowance.allowanceCu * WARN_AT) return null;
  const used = allowance.usedCu >= allowance.allowanceCu;
  const overage = used && overageApplies(project.plan, (await db().project.findUnique({ where: { id: project.id }, select: { overage: true } }))?.overage ?? false);
  const percent = Math.min(100, Math.floor((allowance.usedCu / allowance.allowanceCu) * 100));
  const period = allowance.period === "day" ? "today's" : "this month's";
  return (
    <section
      aria-label="Plan allowance"
      data-testid="allowance-banner"
      className={
        used && !overage
          ? "border-b border-danger/30 bg-danger-soft px-4 py-3 text-sm text-danger-text sm:px-6 lg:px-10"
          : "border-b border-warn-text/25 bg-warn-soft px-4 py-3 text-sm text-warn-text sm:px-6 lg:px-10"
      }
    >
      <p>
        <strong className="font-semibold">
          {used ? `This project used all of ${period} allowance` : `This project used ${percent} % of ${period} allowance`}
        </strong>{" "}
        ({formatNumber(allowance.usedCu)} of {formatNumber(allowance.allowanceCu)} CU on the {allowance.label} plan).{" "}
        {used
          ? overage
            ? "Overage is on: calls are still served and metered past the allowance."
            : "Calls are refused with 429 EXCEEDED_QUOTA_LIMIT until it resets."
          : "At 100 % calls are refused with 429 EXCEEDED_QUOTA_LIMIT."}{" "}
        It resets at {formatDateTime(allowance.resetsAt)}.{" "}
        <Link href={`/projects/${project.id}/plan`} className="font-medium underline underline-offset-2">
          See plans
        </Link>
      </p>
    </section>
  );
}
