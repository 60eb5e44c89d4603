import type { Metadata } from "next";
import { projectAccess } from "@/components/console/project-access";
import { PageHeader } from "@/components/ui/page-header";
import { WebhookBuilder } from "@/components/webhooks/webhook-builder";
import { privateUrlsAllowedBy } from "@/lib/webhooks/url-guard";

export const metadata: Metadata = { title: "New webhook" };

export default async function NewWebhookPage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  await projectAccess(projectId);
  return (
    <div className="space-y-8">
      <PageHeader title="New webhook" description="Choose what to watch, where to deliver it, then preview what it would have matched before you create it." />
      <WebhookBuilder projectId={projectId} privateUrls={privateUrlsAllowedBy()} />
    </div>
  );
}
