import { z } from "zod";
import { parseBody, withUser } from "@/lib/api/route";
import { createAdditionalKey, listKeys } from "@/lib/keys/service";

type P = { projectId: string };
const createKeySchema = z.object({ name: z.string().trim().min(1, "Enter a key name").max(64, "Use at most 64 characters") });

export const GET = withUser<P>(async (_req, { user, params }) => Response.json({ items: await listKeys(user.id, params.projectId) }));

export const POST = withUser<P>(async (req, { user, params }) => {
  const { name } = await parseBody(req, createKeySchema);
  const key = await createAdditionalKey(user.id, params.projectId, name);
  return Response.json(key, { status: 201 });
});
