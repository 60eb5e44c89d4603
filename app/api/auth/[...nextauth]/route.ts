import NextAuth from "next-auth";
import { readJsonBody } from "@/lib/api/route";
import { authOptions } from "@/lib/auth/options";
import { email } from "@/lib/auth/schema";
import { signInRefusal } from "@/lib/auth/throttle";
import { clientIp } from "@/lib/client-ip";
import { databaseOutage } from "@/lib/db/outage";
import { getEnv } from "@/lib/env";
import { databaseUnavailableError, toAppError, type AppError } from "@/lib/errors";

type Context = { params: Promise<{ nextauth: string[] }> };

const handler = (req: Request, ctx: Context) => NextAuth(authOptions())(req, ctx);

/**
 * What a POST submits: a form (next-auth's client posts one) or JSON, which is read as every console
 * body is (lib/api/route.ts), refused with 400 when it is not JSON (next-auth failed on it with 500).
 */
async function submittedBody(req: Request): Promise<unknown> {
  const type = req.headers.get("content-type") ?? "";
  if (type.includes("application/x-www-form-urlencoded")) return Object.fromEntries(new URLSearchParams(await req.clone().text()));
  if (type.includes("application/json")) return readJsonBody(req.clone());
  return undefined;
}

/** The email a credentials sign-in submits. */
function submittedEmail(body: unknown): string | null {
  const parsed = email.safeParse(typeof body === "object" && body !== null && "email" in body ? body.email : undefined);
  return parsed.success ? parsed.data : null;
}

/**
 * next-auth answers every credentials sign-in its authorize() refuses with HTTP 401, and has no
 * way to add a header. A throttled attempt is answered here instead, before next-auth: 429 with
 * Retry-After and `{ code, message }`, plus the `url` field next-auth's client signIn() reads the
 * error from, so signIn() resolves with `error` = the message and `status` = 429. A JSON body that
 * cannot be read is refused the same way, with 400, on every action.
 */
async function post(req: Request, ctx: Context): Promise<Response> {
  const { nextauth } = await ctx.params;
  let body: unknown;
  try {
    body = await submittedBody(req);
  } catch (e) {
    return refuse(toAppError(e));
  }
  if (nextauth.join("/") !== "callback/credentials") return handler(req, ctx);
  const address = submittedEmail(body);
  const refusal = address === null ? null : await signInRefusal(address, clientIp(req.headers));
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
