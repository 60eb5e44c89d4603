import { withUser } from "@/lib/api/route";
import { usageApiResponse } from "@/lib/usage/api";

/** The series the usage charts draw (`?from&to&step&groupBy=endpoint|method|network|key|status`, `format=csv`). */
export const GET = withUser<{ projectId: string }>(async (req, { user, params }) => usageApiResponse(user.id, params.projectId, new URL(req.url)));
