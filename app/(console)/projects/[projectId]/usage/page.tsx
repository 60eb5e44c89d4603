import type { Metadata } from "next";
import { projectAccess } from "@/components/console/project-access";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { formatNumber } from "@/components/ui/format";
import { EmptyState, PageHeader } from "@/components/ui/page-header";
import { PLANS } from "@/lib/plans";

export const metadata: Metadata = { title: "Usage" };

export default async function UsagePage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const access = await projectAccess(projectId);
  const plan = PLANS[access.project.plan];
  const limits = [
    { label: "Plan", value: plan.label },
    { label: `Allowance per ${plan.period}`, value: plan.allowanceCu === null ? "By contract" : `${formatNumber(plan.allowanceCu)} CU` },
    { label: "Throughput", value: plan.cuPerSecond === null ? "By contract" : `${formatNumber(plan.cuPerSecond)} CU/s` },
    { label: "API keys", value: `Up to ${formatNumber(plan.maxKeys)}` },
  ];
  return (
    <div className="space-y-8">
      <PageHeader title="Usage" description="Requests and compute units (CU) used by this project's keys." />
      <Card aria-labelledby="plan-limits-title">
        <CardHeader titleId="plan-limits-title" title="Plan limits" description="Allowances reset at 00:00 UTC." />
        <CardBody>
          <dl className="grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
            {limits.map((l) => (
              <div key={l.label} className="space-y-1">
                <dt className="text-xs font-medium text-muted">{l.label}</dt>
                <dd className="text-sm font-semibold text-fg">{l.value}</dd>
              </div>
            ))}
          </dl>
        </CardBody>
      </Card>
      <EmptyState
        title="Usage charts arrive soon"
        icon={
          <svg aria-hidden="true" viewBox="0 0 20 20" className="size-5" fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round">
            <path d="M3.5 16.5h13M6 13.5V9M10 13.5V5.5M14 13.5v-6" />
          </svg>
        }
      >
        <p>Usage charts arrive soon; requests are already metered per minute, so the charts will include your traffic from today.</p>
      </EmptyState>
    </div>
  );
}
