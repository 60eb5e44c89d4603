import { withUser } from "@/lib/api/route";
import { familyOf } from "@/lib/chains/registry";
import { AppError } from "@/lib/errors";
import { networkBySlug } from "@/lib/networks";
import { getProjectForUser } from "@/lib/projects/service";

type P = { projectId: string };

/** Example values from a network's chain or index (its family's, shaped for its playground tab), for the playground's form. */
export const GET = withUser<P>(async (req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  const slug = new URL(req.url).searchParams.get("network");
  if (!slug) throw new AppError("MISSING_REQUIRED_PARAMETER", "network: give a network, for example babylon-mainnet.");
  const network = networkBySlug(slug);
  const examples = network && familyOf(network)?.examples;
  if (!network || !examples) throw new AppError("NOT_SUPPORTED_CHAIN", `network: ${slug.slice(0, 64)} is not a network with a playground on this deployment.`);
  return Response.json(await examples(network), { headers: { "Cache-Control": "no-store" } });
});
