import type { Metadata } from "next";
import { projectAccess } from "@/components/console/project-access";
import { KeysManager } from "@/components/keys/keys-manager";
import { PageHeader } from "@/components/ui/page-header";
import { PLANS } from "@/lib/plans";

export const metadata: Metadata = { title: "Keys" };

export default async function KeysPage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const access = await projectAccess(projectId);
  const plan = PLANS[access.project.plan];
  return (
    <div className="space-y-8">
      <PageHeader title="Keys" description="Create, reveal, reset and revoke the keys that authenticate this project's requests, and limit each to your origins and addresses." />
      <KeysManager projectId={projectId} planLabel={plan.label} maxKeys={plan.maxKeys} />
    </div>
  );
}
