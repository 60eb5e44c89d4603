import type { z } from "zod";
import { requireUser, type SessionUser } from "@/lib/auth/session";
import { getEnv } from "@/lib/env";
import { AppError, toAppError } from "@/lib/errors";
import { parseJsonBody } from "@/lib/text";
import { parseInput } from "@/lib/validation";
import { crossSiteRefusal } from "./same-origin";

export function errorResponse(error: AppError): Response {
  return Response.json(error.toJSON(), { status: error.status, headers: error.headers });
}

/** The JSON body of a console request, refused with 400 unless it can be stored as it is (lib/text.ts). */
export async function readJsonBody(req: Request): Promise<unknown> {
  const bytes = await req.arrayBuffer().catch(() => {
    throw new AppError("INTERRUPTED", "The request was interrupted while its body was being read.");
  });
  return parseJsonBody(new Uint8Array(bytes));
}

/** Parses a JSON body with a shared zod schema; the first problem becomes a readable 400 (lib/validation.ts). */
export async function parseBody<S extends z.ZodType>(req: Request, schema: S): Promise<z.infer<S>> {
  return parseInput(schema, await readJsonBody(req));
}

type Params = Record<string, string>;

/** Refuses a cross-site or non-JSON state-changing request before anything else looks at it. */
function checkSameOrigin(req: Request): void {
  const refusal = crossSiteRefusal(req, getEnv().PUBLIC_URL);
  if (refusal) throw refusal;
}

/**
 * Console route wrapper: refuses cross-site and non-JSON state-changing requests, requires a
 * signed-in user (session cookie, never an API key), passes the route params, and maps every
 * error to `{ code, message }` with its status.
 */
export function withUser<P extends Params = Params>(
  handler: (req: Request, ctx: { user: SessionUser; params: P }) => Promise<Response>,
): (req: Request, ctx: { params: Promise<P> }) => Promise<Response> {
  return async (req, ctx) => {
    try {
      checkSameOrigin(req);
      const user = await requireUser();
      return await handler(req, { user, params: await ctx.params });
    } catch (e) {
      return errorResponse(toAppError(e));
    }
  };
}

/** Same checks and mapping for the few console routes that need no session (sign-up). */
export function withErrors(handler: (req: Request) => Promise<Response>): (req: Request) => Promise<Response> {
  return async (req) => {
    try {
      checkSameOrigin(req);
      return await handler(req);
    } catch (e) {
      return errorResponse(toAppError(e));
    }
  };
}
