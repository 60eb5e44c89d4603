import type { Metadata } from "next";
import { projectAccess } from "@/components/console/project-access";
import { PlanChooser } from "@/components/plans/plan-chooser";
import { PageHeader } from "@/components/ui/page-header";
import { PLANS } from "@/lib/plans";
import { planState } from "@/lib/projects/plan";
import { allowanceOf } from "@/lib/usage/query";

export const metadata: Metadata = { title: "Plans" };

export default async function PlanPage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const { user, project } = await projectAccess(projectId);
  const [state, allowance] = await Promise.all([planState(user.id, project.id), allowanceOf(project.id, project.plan)]);
  return (
    <div className="space-y-8">
      <PageHeader
        title="Plans"
        description="Compare the plans and switch at once: no payment is taken here. Allowances reset at 00:00 UTC (the free plan's every day, paid plans' on the 1st of the month)."
      />
      <PlanChooser projectId={project.id} plans={PLANS} state={state} usedCu={allowance.usedCu} resetsAt={allowance.resetsAt} />
    </div>
  );
}
