import NextAuth from "next-auth";
import { authOptions } from "@/lib/auth/options";
import { email } from "@/lib/auth/schema";
import { signInRefusal } from "@/lib/auth/throttle";
import { clientIp } from "@/lib/client-ip";
import { getEnv } from "@/lib/env";

type Context = { params: Promise<{ nextauth: string[] }> };

const handler = (req: Request, ctx: Context) => NextAuth(authOptions())(req, ctx);

/** The email a credentials sign-in submits (next-auth's client posts a form; JSON works too). */
async function submittedEmail(req: Request): Promise<string | null> {
  const type = req.headers.get("content-type") ?? "";
  const text = await req.clone().text();
  let value: unknown;
  if (type.includes("application/x-www-form-urlencoded")) {
    value = new URLSearchParams(text).get("email");
  } else if (type.includes("application/json")) {
    try {
      const json: unknown = JSON.parse(text);
      value = typeof json === "object" && json !== null && "email" in json ? json.email : undefined;
    } catch {
      return null;
    }
  }
  const parsed = email.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/**
 * next-auth answers every credentials sign-in its authorize() refuses with HTTP 401, and has no
 * way to add a header. A throttled attempt is answered here instead, before next-auth: 429 with
 * Retry-After and `{ code, message }`, plus the `url` field next-auth's client signIn() reads the
 * error from, so signIn() resolves with `error` = the message and `status` = 429.
 */
async function post(req: Request, ctx: Context): Promise<Response> {
  const { nextauth } = await ctx.params;
  if (nextauth.join("/") === "callback/credentials") {
    const address = await submittedEmail(req);
    const refusal = address === null ? null : signInRefusal(address, clientIp(req.headers));
    if (refusal) {
      const url = new URL("/api/auth/error", getEnv().PUBLIC_URL);
      url.searchParams.set("error", refusal.message);
      return Response.json({ ...refusal.toJSON(), url: url.href }, { status: refusal.status, headers: refusal.headers });
    }
  }
  return handler(req, ctx);
}

export { handler as GET, post as POST };
