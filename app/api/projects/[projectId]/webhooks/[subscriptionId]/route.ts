import { parseBody, withUser } from "@/lib/api/route";
import { getProjectForUser } from "@/lib/projects/service";
import { z } from "zod";
import { deleteWebhook, getWebhook, updateWebhook } from "@/lib/webhooks/service";

type P = { projectId: string; subscriptionId: string };

export const GET = withUser<P>(async (_req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  return Response.json(await getWebhook({ projectId: params.projectId }, params.subscriptionId));
});

/** Answers the changed record (the public API answers `{ result: true }`). */
export const PATCH = withUser<P>(async (req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  return Response.json(await updateWebhook({ projectId: params.projectId }, params.subscriptionId, await parseBody(req, z.unknown())));
});

export const DELETE = withUser<P>(async (_req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  await deleteWebhook({ projectId: params.projectId }, params.subscriptionId);
  return Response.json({ result: true });
});
