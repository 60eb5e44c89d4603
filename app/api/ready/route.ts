import { migrationStatus } from "@/lib/db/migrate";

export const dynamic = "force-dynamic";

/** Readiness: the database answers and every migration is applied. */
export async function GET(): Promise<Response> {
  const url = process.env.DATABASE_URL;
  try {
    if (!url) throw new Error("no database configured");
    const status = await migrationStatus(url);
    const ready = status.upToDate;
    const reason = status.failed.length > 0 ? `failed migrations: ${status.failed.join(", ")}` : `pending migrations: ${status.pending.join(", ")}`;
    return Response.json(ready ? { status: "ready" } : { status: "not_ready", reason },
      { status: ready ? 200 : 503, headers: { "Cache-Control": "no-store" } },
    );
  } catch {
    return Response.json({ status: "not_ready", reason: "database unreachable" }, { status: 503, headers: { "Cache-Control": "no-store" } });
  }
}
