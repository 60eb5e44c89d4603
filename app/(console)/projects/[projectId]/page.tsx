import type { Metadata } from "next";
import { projectAccess, publicOrigin } from "@/components/console/project-access";
import { CurlExample } from "@/components/endpoints/curl-example";
import { EndpointList } from "@/components/endpoints/endpoint-list";
import { ApiKeyCard } from "@/components/keys/api-key-card";
import { KeyRevealProvider } from "@/components/keys/key-reveal";
import { Badge } from "@/components/ui/badge";
import { PageHeader } from "@/components/ui/page-header";
import { CuSparkline } from "@/components/usage/cu-sparkline";
import { quickStartOf } from "@/lib/chains/client";
import { listKeys } from "@/lib/keys/service";
import { clientNetwork, networks } from "@/lib/networks";
import { PLANS } from "@/lib/plans";

export const metadata: Metadata = { title: "Overview" };

export default async function OverviewPage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const access = await projectAccess(projectId);
  const { user, project } = access;
  const [first] = await listKeys(user.id, project.id);
  const origin = publicOrigin();
  const catalog = networks().map(clientNetwork);
  const quickStart = quickStartOf(catalog);
  return (
    <div className="space-y-8">
      <PageHeader
        title={project.name}
        meta={<Badge tone="accent">{PLANS[project.plan].label}</Badge>}
        description={
          <>
            Project ID <code className="text-fg">{project.id}</code>
          </>
        }
      />
      <KeyRevealProvider projectId={project.id} primaryKey={first ? { id: first.id, name: first.name, masked: first.masked } : null}>
        <ApiKeyCard />
        <CuSparkline projectId={project.id} />
        {quickStart ? <CurlExample origin={origin} network={quickStart.network} /> : null}
        <EndpointList origin={origin} networks={catalog} />
      </KeyRevealProvider>
    </div>
  );
}
