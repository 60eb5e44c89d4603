import { getProjectForUser } from "@/lib/projects/service";
import { queryInput } from "@/lib/validation";
import { parseUsageQuery, usageCsv, usageReport } from "./query";

/**
 * `GET /api/projects/<id>/usage?from&to&step&groupBy&format` for a signed-in user: the project's
 * usage series as JSON, or the same numbers as CSV. Another user's project is 404; a bad
 * parameter is 400 naming it (thrown as AppError).
 */
export async function usageApiResponse(userId: string, projectId: string, url: URL, now = Date.now()): Promise<Response> {
  const project = await getProjectForUser(userId, projectId);
  const query = parseUsageQuery(queryInput(url.searchParams), now);
  const report = await usageReport(project, query, now);
  if (query.format === "csv") {
    const name = `usage-${project.id}-${report.from.slice(0, 16).replace(/:/g, "")}-${report.groupBy}.csv`;
    return new Response(usageCsv(report), {
      headers: { "Content-Type": "text/csv; charset=utf-8", "Content-Disposition": `attachment; filename="${name}"`, "Cache-Control": "no-store" },
    });
  }
  return Response.json(report, { headers: { "Cache-Control": "no-store" } });
}
