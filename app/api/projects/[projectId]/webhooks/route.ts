import { z } from "zod";
import { parseBody, withUser } from "@/lib/api/route";
import { getProjectForUser } from "@/lib/projects/service";
import { queryInput } from "@/lib/validation";
import { createWebhook, listConsoleWebhooks, webhookNetwork } from "@/lib/webhooks/service";

type P = { projectId: string };

/** A create body of the public API plus the network's slug. */
const withNetwork = z.looseObject({ network: z.unknown() });

/** Every network's subscriptions (or `?network=<slug>`), with their deliveries of the last 24 hours. */
export const GET = withUser<P>(async (req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  return Response.json(await listConsoleWebhooks(params.projectId, queryInput(new URL(req.url).searchParams)));
});

export const POST = withUser<P>(async (req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  const { network, ...body } = await parseBody(req, withNetwork);
  return Response.json(await createWebhook(params.projectId, webhookNetwork(network), body), { status: 201 });
});
