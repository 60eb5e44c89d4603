import { z } from "zod";
import { parseBody, withUser } from "@/lib/api/route";
import { getProjectForUser } from "@/lib/projects/service";
import { consoleBilling, replayWebhook } from "@/lib/webhooks/service";

export const POST = withUser<{ projectId: string; subscriptionId: string }>(async (req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  return Response.json(await replayWebhook({ projectId: params.projectId }, params.subscriptionId, await parseBody(req, z.unknown()), consoleBilling(params.projectId)));
});
