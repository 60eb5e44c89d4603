import type { Metadata } from "next";
import { projectAccess } from "@/components/console/project-access";
import { PageHeader } from "@/components/ui/page-header";
import { RequestLogView } from "@/components/usage/request-log";
import { networks } from "@/lib/networks";

export const metadata: Metadata = { title: "Requests" };

export default async function RequestsPage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const access = await projectAccess(projectId);
  return (
    <div className="space-y-6">
      <PageHeader
        title="Requests"
        description="The last 1,000 requests made with this project's keys, newest first, refreshed live. Choose a request to see its params and result; API keys and secret-looking values are masked."
      />
      <RequestLogView projectId={access.project.id} networks={networks().map((n) => ({ slug: n.slug, label: n.displayName }))} />
    </div>
  );
}
