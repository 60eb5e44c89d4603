import { withUser } from "@/lib/api/route";
import { revealKey } from "@/lib/keys/service";

export const POST = withUser<{ projectId: string; keyId: string }>(async (_req, { user, params }) =>
  Response.json({ apiKey: await revealKey(user.id, params.projectId, params.keyId) }, { headers: { "Cache-Control": "no-store" } }),
);
