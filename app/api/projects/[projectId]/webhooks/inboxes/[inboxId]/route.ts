import { withUser } from "@/lib/api/route";
import { getProjectForUser } from "@/lib/projects/service";
import { deleteInbox } from "@/lib/webhooks/inbox";

export const DELETE = withUser<{ projectId: string; inboxId: string }>(async (_req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  await deleteInbox(params.projectId, params.inboxId);
  return Response.json({ result: true });
});
