import { withUser } from "@/lib/api/route";
import { getProjectForUser } from "@/lib/projects/service";
import { createInbox, listInboxes } from "@/lib/webhooks/inbox";

type P = { projectId: string };

export const GET = withUser<P>(async (_req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  return Response.json({ items: await listInboxes(params.projectId) });
});

/** A new test inbox; its URL is in this answer only. */
export const POST = withUser<P>(async (_req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  return Response.json(await createInbox(params.projectId), { status: 201, headers: { "Cache-Control": "no-store" } });
});
