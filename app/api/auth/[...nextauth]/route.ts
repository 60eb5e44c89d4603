import NextAuth from "next-auth";
import { authOptions } from "@/lib/auth/options";
import { email } from "@/lib/auth/schema";
import { signInRefusal } from "@/lib/auth/throttle";
import { clientIp } from "@/lib/client-ip";
import { databaseOutage } from "@/lib/db/outage";
import { getEnv } from "@/lib/env";
import { databaseUnavailableError, type AppError } from "@/lib/errors";

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
  if (nextauth.join("/") !== "callback/credentials") return handler(req, ctx);
  const address = await submittedEmail(req);
  const refusal = address === null ? null : signInRefusal(address, clientIp(req.headers));
  if (refusal) return refuse(refusal);
  const res = await handler(req, ctx);
  // authorize() could not reach the database (it reported the outage): 503 with Retry-After, not 401.
  if (res.status === 401 && databaseOutage()) return refuse(databaseUnavailableError());
  return res;
}

function refuse(refusal: AppError): Response {
  const url = new URL("/api/auth/error", getEnv().PUBLIC_URL);
  url.searchParams.set("error", refusal.message);
  return Response.json({ ...refusal.toJSON(), url: url.href }, { status: refusal.status, headers: refusal.headers });
}

export { handler as GET, post as POST };
