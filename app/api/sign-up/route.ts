import { withErrors } from "@/lib/api/route";
import { createUser } from "@/lib/auth/users";

export const POST = withErrors(async (req) => {
  let body: unknown;
  try {
    body = await req.json();
  } catch {
    body = undefined;
  }
  const user = await createUser(body);
  return Response.json({ id: user.id, email: user.email }, { status: 201 });
});
