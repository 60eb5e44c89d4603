import type { Metadata } from "next";
import { projectAccess, publicOrigin } from "@/components/console/project-access";
import { AptosPlayground } from "@/components/playground/aptos-playground";
import { isAptosRoute, type AptosPlaygroundNetwork, type AptosRoute } from "@/components/playground/aptos-request";
import { ConsensusPlayground } from "@/components/playground/consensus-playground";
import { EvmPlayground } from "@/components/playground/evm-playground";
import { isEvmPlaygroundMethod, type EvmPlaygroundMethod, type EvmPlaygroundNetwork } from "@/components/playground/evm-request";
import { InterfaceTabs } from "@/components/playground/interface-tabs";
import type { PlaygroundNetwork } from "@/components/playground/types";
import { PageHeader } from "@/components/ui/page-header";
import { isConsensusMethod, type ConsensusMethod } from "@/lib/consensus/catalog";
import { networks } from "@/lib/networks";

export const metadata: Metadata = { title: "Playground" };

type Search = { network?: string | string[]; method?: string | string[] };

export default async function PlaygroundPage({ params, searchParams }: { params: Promise<{ projectId: string }>; searchParams: Promise<Search> }) {
  const { projectId } = await params;
  await projectAccess(projectId);
  const search = await searchParams;

  const consensus: PlaygroundNetwork[] = networks()
    .filter((n) => n.family === "consensus")
    .map((n) => ({ slug: n.slug, displayName: n.displayName, chainId: String(n.activeChainId), source: n.source.kind }));
  const wanted = { network: [search.network].flat()[0], method: [search.method].flat()[0] };
  const initialNetwork = consensus.find((n) => n.slug === wanted.network)?.slug ?? consensus[0]?.slug;
  // status needs no parameters and answers before the chain has data: a good first request.
  const initialMethod: ConsensusMethod = wanted.method && isConsensusMethod(wanted.method) ? wanted.method : "status";

  const evm: EvmPlaygroundNetwork[] = networks()
    .filter((n) => n.family === "evm")
    .map((n) => ({ slug: n.slug, displayName: n.displayName, chainId: String(n.activeChainId), currency: n.currency, source: n.source.kind }));
  const evmWanted = evm.find((n) => n.slug === wanted.network)?.slug;
  const evmNetwork = evmWanted ?? evm[0]?.slug;
  // eth_blockNumber needs no parameters: a good first request.
  const evmMethod: EvmPlaygroundMethod = wanted.method && isEvmPlaygroundMethod(wanted.method) ? wanted.method : "eth_blockNumber";

  const aptos: AptosPlaygroundNetwork[] = networks()
    .filter((n) => n.family === "move")
    .map((n) => ({ slug: n.slug, displayName: n.displayName, chainId: String(n.activeChainId), source: n.source.kind, path: n.network }));
  const aptosWanted = aptos.find((n) => n.slug === wanted.network)?.slug;
  const aptosNetwork = aptosWanted ?? aptos[0]?.slug;
  // Ledger information needs no parameters and answers as soon as the index has a block: a good first request.
  const aptosRoute: AptosRoute = wanted.method && isAptosRoute(wanted.method) ? wanted.method : "ledger_info";

  return (
    <div className="space-y-8">
      <PageHeader title="Playground" description="Send requests to the public endpoints from the browser with this project's key, and inspect the answers." />
      <InterfaceTabs
        label="Interface"
        initialTab={evmWanted ? "evm" : aptosWanted ? "aptos" : undefined}
        tabs={[
          {
            id: "consensus",
            label: "Consensus (CometBFT RPC)",
            panel: initialNetwork ? (
              <ConsensusPlayground projectId={projectId} origin={publicOrigin()} networks={consensus} initialNetwork={initialNetwork} initialMethod={initialMethod} />
            ) : undefined,
          },
          {
            id: "evm",
            label: "EVM JSON-RPC",
            panel: evmNetwork ? <EvmPlayground projectId={projectId} origin={publicOrigin()} networks={evm} initialNetwork={evmNetwork} initialMethod={evmMethod} /> : undefined,
          },
          {
            id: "aptos",
            label: "Aptos (fullnode REST)",
            panel: aptosNetwork ? (
              <AptosPlayground projectId={projectId} origin={publicOrigin()} networks={aptos} initialNetwork={aptosNetwork} initialRoute={aptosRoute} />
            ) : undefined,
          },
        ]}
      />
    </div>
  );
}
