import { withErrors } from "@/lib/api/route";
import { signUp } from "@/lib/auth/users";
import { clientIp } from "@/lib/client-ip";

export const POST = withErrors(async (req) => {
  let body: unknown;
  try {
    body = await req.json();
  } catch {
    body = undefined;
  }
  const user = await signUp(body, clientIp(req.headers));
  return Response.json({ id: user.id, email: user.email }, { status: 201 });
});
