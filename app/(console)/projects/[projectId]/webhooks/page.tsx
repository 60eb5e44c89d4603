import type { Metadata } from "next";
import { projectAccess, publicOrigin } from "@/components/console/project-access";
import { EmptyState, PageHeader } from "@/components/ui/page-header";

export const metadata: Metadata = { title: "Webhooks" };

export default async function WebhooksPage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  await projectAccess(projectId);
  return (
    <div className="space-y-8">
      <PageHeader title="Webhooks" description="Get an HTTP callback when a transaction, log or block period you care about happens on chain." />
      <EmptyState
        title="No webhooks yet"
        icon={
          <svg aria-hidden="true" viewBox="0 0 20 20" className="size-5" fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" strokeLinejoin="round">
            <path d="M8.5 6.2a2.8 2.8 0 1 1 3.6 2.7l-2 3.9M5.3 11.5a2.8 2.8 0 1 0 3.2 3.7h4.3M14.7 12.6a2.8 2.8 0 1 0-1.5-5.2" />
          </svg>
        }
      >
        <p>
          Webhooks for EVM and Aptos networks will be managed here. Each network has its webhook API under{" "}
          <code className="break-all text-fg">{publicOrigin()}/v1/&lt;protocol&gt;/&lt;network&gt;/webhooks</code>; the Overview lists them all.
        </p>
      </EmptyState>
    </div>
  );
}
