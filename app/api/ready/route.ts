import { readiness } from "@/lib/db/readiness";

export const dynamic = "force-dynamic";

/** Readiness: the database answers and every migration is applied. */
export async function GET(): Promise<Response> {
  const r = await readiness();
  return Response.json(r.ready ? { status: "ready" } : { status: "not_ready", reason: r.reason }, {
    status: r.ready ? 200 : 503,
    headers: { "Cache-Control": "no-store" },
  });
}
