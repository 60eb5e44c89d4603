import { parseBody, withUser } from "@/lib/api/route";
import { allowlistSchema } from "@/lib/keys/schema";
import { setKeyAllowlist } from "@/lib/keys/service";

/** Replaces the key's allowlists: `{ origins: string[], ips: string[] }` (each at most 25; empty allows all). */
export const PUT = withUser<{ projectId: string; keyId: string }>(async (req, { user, params }) => {
  const lists = await parseBody(req, allowlistSchema);
  return Response.json(await setKeyAllowlist(user.id, params.projectId, params.keyId, lists));
});
