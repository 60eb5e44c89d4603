import { withUser } from "@/lib/api/route";
import { aptosExamples } from "@/lib/aptos/examples";
import { AppError } from "@/lib/errors";
import { networkBySlug } from "@/lib/networks";
import { getProjectForUser } from "@/lib/projects/service";

type P = { projectId: string };

/** Example values from an Aptos network's index (head, a recent transaction and its sender), for the playground form. */
export const GET = withUser<P>(async (req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  const slug = new URL(req.url).searchParams.get("network");
  if (!slug) throw new AppError("MISSING_REQUIRED_PARAMETER", "network: give an Aptos network, for example aptos-testnet.");
  const network = networkBySlug(slug);
  if (network?.family !== "move") throw new AppError("NOT_SUPPORTED_CHAIN", `network: ${slug.slice(0, 64)} is not an Aptos network.`);
  return Response.json(await aptosExamples(network.slug), { headers: { "Cache-Control": "no-store" } });
});
