import { parseBody, withUser } from "@/lib/api/route";
import { changePlan, changePlanSchema, planState } from "@/lib/projects/plan";

type P = { projectId: string };

/** The project's plan, overage, keys and recent plan changes. */
export const GET = withUser<P>(async (_req, { user, params }) => Response.json(await planState(user.id, params.projectId), { headers: { "Cache-Control": "no-store" } }));

/** Switches the plan at once: `{ plan, revokeKeyIds? }`. */
export const POST = withUser<P>(async (req, { user, params }) => {
  const input = await parseBody(req, changePlanSchema);
  return Response.json(await changePlan(user, params.projectId, input));
});
