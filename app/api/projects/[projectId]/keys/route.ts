import { parseBody, withUser } from "@/lib/api/route";
import { createKeySchema } from "@/lib/keys/schema";
import { createAdditionalKey, listKeys } from "@/lib/keys/service";

type P = { projectId: string };

export const GET = withUser<P>(async (_req, { user, params }) => Response.json({ items: await listKeys(user.id, params.projectId) }));

export const POST = withUser<P>(async (req, { user, params }) => {
  const { name } = await parseBody(req, createKeySchema);
  const key = await createAdditionalKey(user.id, params.projectId, name);
  return Response.json(key, { status: 201 });
});
