import { limitsMode, readiness } from "@/lib/db/readiness";

export const dynamic = "force-dynamic";

/** Readiness: the database answers and every migration is applied; `limits` says whether limits are shared through Redis. */
export async function GET(): Promise<Response> {
  const r = await readiness();
  const limits = limitsMode();
  return Response.json(r.ready ? { status: "ready", limits } : { status: "not_ready", reason: r.reason, limits }, {
    status: r.ready ? 200 : 503,
    headers: { "Cache-Control": "no-store" },
  });
}
