import { readJsonBody, withErrors } from "@/lib/api/route";
import { signUp } from "@/lib/auth/users";
import { clientIp } from "@/lib/client-ip";

export const POST = withErrors(async (req) => {
  const user = await signUp(await readJsonBody(req), clientIp(req.headers));
  return Response.json({ id: user.id, email: user.email }, { status: 201 });
});
