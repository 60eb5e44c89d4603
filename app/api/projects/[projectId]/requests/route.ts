import { withUser } from "@/lib/api/route";
import { requestsApiResponse } from "@/lib/usage/requests";

/** The project's request log, newest first (`?interface&network&status&method&limit&before`). */
export const GET = withUser<{ projectId: string }>(async (req, { user, params }) => requestsApiResponse(user.id, params.projectId, new URL(req.url)));
