import { withUser } from "@/lib/api/route";
import { getProjectForUser } from "@/lib/projects/service";
import { consoleBilling, testWebhook } from "@/lib/webhooks/service";

export const POST = withUser<{ projectId: string; subscriptionId: string }>(async (_req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  return Response.json({ result: true, ...(await testWebhook({ projectId: params.projectId }, params.subscriptionId, consoleBilling(params.projectId))) });
});
