import type { Metadata } from "next";
import { projectAccess } from "@/components/console/project-access";
import { ButtonLink } from "@/components/ui/button";
import { PageHeader } from "@/components/ui/page-header";
import { InboxesPanel } from "@/components/webhooks/inboxes-panel";
import { WebhooksList } from "@/components/webhooks/webhooks-list";

export const metadata: Metadata = { title: "Webhooks" };

export default async function WebhooksPage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  await projectAccess(projectId);
  return (
    <div className="space-y-8">
      <PageHeader
        title="Webhooks"
        description="Get an HTTP callback when a transaction, log or block period you care about happens on chain."
        actions={<ButtonLink href={`/projects/${projectId}/webhooks/new`}>Create webhook</ButtonLink>}
      />
      <WebhooksList projectId={projectId} />
      <InboxesPanel projectId={projectId} />
    </div>
  );
}
