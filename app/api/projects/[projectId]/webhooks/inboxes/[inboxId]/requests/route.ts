import { withUser } from "@/lib/api/route";
import { getProjectForUser } from "@/lib/projects/service";
import { listInboxRequests } from "@/lib/webhooks/inbox";

/** The inbox's last 100 requests, newest first. */
export const GET = withUser<{ projectId: string; inboxId: string }>(async (_req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  return Response.json(await listInboxRequests(params.projectId, params.inboxId));
});
