import { withUser } from "@/lib/api/route";
import { trafficApiResponse } from "@/lib/usage/requests";

/** The last 5 minutes of the project: requests, failures and latency per interface. */
export const GET = withUser<{ projectId: string }>(async (req, { user, params }) => trafficApiResponse(user.id, params.projectId, new URL(req.url)));
