import { z } from "zod";
import { parseBody, withUser } from "@/lib/api/route";
import { getProjectForUser } from "@/lib/projects/service";
import { previewWebhook, webhookNetwork } from "@/lib/webhooks/service";

/** A create body plus the network's slug: what it would have matched in the last 100 blocks. */
export const POST = withUser<{ projectId: string }>(async (req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  const { network, ...body } = await parseBody(req, z.looseObject({ network: z.unknown() }));
  return Response.json(await previewWebhook(webhookNetwork(network), body));
});
