import { withUser } from "@/lib/api/route";
import { recentExamples } from "@/lib/consensus/examples";
import { AppError } from "@/lib/errors";
import { networkBySlug } from "@/lib/networks";
import { getProjectForUser } from "@/lib/projects/service";

type P = { projectId: string };

/** Example parameter values from a consensus network's recent blocks, for the playground form. */
export const GET = withUser<P>(async (req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  const slug = new URL(req.url).searchParams.get("network");
  if (!slug) throw new AppError("MISSING_REQUIRED_PARAMETER", "network: give a consensus network, for example babylon-mainnet.");
  const network = networkBySlug(slug);
  if (network?.family !== "consensus") throw new AppError("NOT_SUPPORTED_CHAIN", `network: ${slug.slice(0, 64)} is not a consensus network.`);
  return Response.json(await recentExamples(network.slug), { headers: { "Cache-Control": "no-store" } });
});
