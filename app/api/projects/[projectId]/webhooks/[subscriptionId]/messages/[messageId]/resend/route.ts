import { withUser } from "@/lib/api/route";
import { getProjectForUser } from "@/lib/projects/service";
import { consoleBilling, resendWebhookMessage } from "@/lib/webhooks/service";

export const POST = withUser<{ projectId: string; subscriptionId: string; messageId: string }>(async (_req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  return Response.json({ result: true, ...(await resendWebhookMessage({ projectId: params.projectId }, params.subscriptionId, params.messageId, consoleBilling(params.projectId))) });
});
