import type { Metadata } from "next";
import { projectAccess } from "@/components/console/project-access";
import { WebhookDetail } from "@/components/webhooks/webhook-detail";
import { PLANS } from "@/lib/plans";

export const metadata: Metadata = { title: "Webhook" };

export default async function WebhookPage({ params }: { params: Promise<{ projectId: string; subscriptionId: string }> }) {
  const { projectId, subscriptionId } = await params;
  const { project } = await projectAccess(projectId);
  const { label, maxReplayBlocks, maxPendingPerWebhook } = PLANS[project.plan];
  return <WebhookDetail projectId={projectId} subscriptionId={subscriptionId} plan={{ label, maxReplayBlocks, maxPendingPerWebhook }} />;
}
