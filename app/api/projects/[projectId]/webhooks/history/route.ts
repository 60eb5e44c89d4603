import { withUser } from "@/lib/api/route";
import { getProjectForUser } from "@/lib/projects/service";
import { queryInput } from "@/lib/validation";
import { webhookHistory } from "@/lib/webhooks/service";

/** Delivery attempts of every network's subscriptions (narrow with ?subscriptionId=). */
export const GET = withUser<{ projectId: string }>(async (req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  return Response.json(await webhookHistory({ projectId: params.projectId }, queryInput(new URL(req.url).searchParams)));
});
