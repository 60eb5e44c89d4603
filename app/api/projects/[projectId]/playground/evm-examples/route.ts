import { withUser } from "@/lib/api/route";
import { AppError } from "@/lib/errors";
import { evmExamples } from "@/lib/evm/examples";
import { networkBySlug } from "@/lib/networks";
import { getProjectForUser } from "@/lib/projects/service";

type P = { projectId: string };

/** Example values from an EVM network's chain (latest block, a transaction, the devnet token), for the playground templates. */
export const GET = withUser<P>(async (req, { user, params }) => {
  await getProjectForUser(user.id, params.projectId);
  const slug = new URL(req.url).searchParams.get("network");
  if (!slug) throw new AppError("MISSING_REQUIRED_PARAMETER", "network: give an EVM network, for example ethereum-sepolia.");
  const network = networkBySlug(slug);
  if (network?.family !== "evm") throw new AppError("NOT_SUPPORTED_CHAIN", `network: ${slug.slice(0, 64)} is not an EVM network.`);
  return Response.json(await evmExamples(network), { headers: { "Cache-Control": "no-store" } });
});
