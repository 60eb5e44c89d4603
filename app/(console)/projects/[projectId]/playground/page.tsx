import type { Metadata } from "next";
import { projectAccess, publicOrigin } from "@/components/console/project-access";
import { InterfaceTabs } from "@/components/playground/interface-tabs";
import { Playground } from "@/components/playground/playground";
import { PageHeader } from "@/components/ui/page-header";
import { clientFamilies, inFamily } from "@/lib/chains/client";
import { clientNetwork, networks } from "@/lib/networks";

export const metadata: Metadata = { title: "Playground" };

type Search = { network?: string | string[]; method?: string | string[] };

export default async function PlaygroundPage({ params, searchParams }: { params: Promise<{ projectId: string }>; searchParams: Promise<Search> }) {
  const { projectId } = await params;
  await projectAccess(projectId);
  const search = await searchParams;
  const wanted = { network: [search.network].flat()[0], method: [search.method].flat()[0] };
  const catalog = networks().map(clientNetwork);

  // One tab per family with a playground; the address's network and method where they fit.
  const tabs = clientFamilies().flatMap((family) => {
    const d = family.playground;
    if (!d) return [];
    const items = catalog.filter(inFamily(family.id));
    const initialNetwork = items.find((n) => n.slug === wanted.network)?.slug ?? items[0]?.slug;
    const initialMethod = d.choices.find((c) => c.method === wanted.method)?.method ?? d.firstMethod;
    const panel = initialNetwork ? (
      <Playground family={family.id} projectId={projectId} origin={publicOrigin()} networks={items} initialNetwork={initialNetwork} initialMethod={initialMethod} />
    ) : undefined;
    return [{ id: family.id, label: d.tab, panel }];
  });

  return (
    <div className="space-y-8">
      <PageHeader title="Playground" description="Send requests to the public endpoints from the browser with this project's key, and inspect the answers." />
      <InterfaceTabs label="Interface" initialTab={catalog.find((n) => n.slug === wanted.network)?.family} tabs={tabs} />
    </div>
  );
}
