import { parseBody, withUser } from "@/lib/api/route";
import { overageSchema, setOverage } from "@/lib/projects/plan";

/** Turns overage on or off: `{ overage: boolean }` (paid plans only). */
export const PUT = withUser<{ projectId: string }>(async (req, { user, params }) => {
  const { overage } = await parseBody(req, overageSchema);
  return Response.json(await setOverage(user, params.projectId, overage));
});
