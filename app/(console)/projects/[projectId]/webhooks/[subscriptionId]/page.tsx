import type { Metadata } from "next";
import { projectAccess } from "@/components/console/project-access";
import { WebhookDetail } from "@/components/webhooks/webhook-detail";

export const metadata: Metadata = { title: "Webhook" };

export default async function WebhookPage({ params }: { params: Promise<{ projectId: string; subscriptionId: string }> }) {
  const { projectId, subscriptionId } = await params;
  await projectAccess(projectId);
  return <WebhookDetail projectId={projectId} subscriptionId={subscriptionId} />;
}
