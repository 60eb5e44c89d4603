import type { Plan } from "@/lib/db/generated/enums";
import { PLANS } from "@/lib/plans";
import { allowanceOf } from "@/lib/usage/query";
import { LiveAllowanceBanner } from "./live-allowance-banner";

/**
 * On every page of a project that used 80 % or more of its plan's allowance this period (read
 * from the daily rollup, as the gateway's quota check does): how much, when it resets, whether calls
 * past it are refused or served as overage, and a link to the Plans page. Rendered here with the
 * current reading, then kept live in the browser (LiveAllowanceBanner), so it also appears when the
 * project crosses 80 % while a page is open. Nothing below 80 %, and nothing for a plan without a
 * fixed allowance.
 */
export async function AllowanceBanner({ project }: { project: { id: string; plan: Plan } }) {
  if (PLANS[project.plan].allowanceCu === null) return null;
  const allowance = await allowanceOf(project.id, project.plan);
  return <LiveAllowanceBanner projectId={project.id} initial={allowance} />;
}
