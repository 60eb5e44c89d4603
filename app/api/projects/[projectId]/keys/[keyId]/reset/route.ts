import { withUser } from "@/lib/api/route";
import { resetKeyForUser } from "@/lib/keys/service";

export const POST = withUser<{ projectId: string; keyId: string }>(async (_req, { user, params }) =>
  Response.json({ apiKey: await resetKeyForUser(user.id, params.projectId, params.keyId) }, { headers: { "Cache-Control": "no-store" } }),
);
