import { withUser } from "@/lib/api/route";
import { requestDetailsApiResponse } from "@/lib/usage/requests";

/** One logged request with its params and result excerpts (secrets masked). */
export const GET = withUser<{ projectId: string; requestId: string }>(async (_req, { user, params }) => requestDetailsApiResponse(user.id, params.projectId, params.requestId));
