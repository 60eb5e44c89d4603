import { parseBody, withUser } from "@/lib/api/route";
import { renameKeySchema } from "@/lib/keys/schema";
import { renameKey, revokeKeyForUser } from "@/lib/keys/service";

type P = { projectId: string; keyId: string };

/** Renames the key: `{ name }`. */
export const PATCH = withUser<P>(async (req, { user, params }) => {
  const { name } = await parseBody(req, renameKeySchema);
  return Response.json(await renameKey(user.id, params.projectId, params.keyId, name));
});

/** Revokes the key: refused by the gateway from now on. */
export const DELETE = withUser<P>(async (_req, { user, params }) => {
  await revokeKeyForUser(user.id, params.projectId, params.keyId);
  return new Response(null, { status: 204 });
});
