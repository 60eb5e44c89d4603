import type { Metadata } from "next";
import { projectAccess } from "@/components/console/project-access";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { formatNumber } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { RecentTraffic } from "@/components/usage/recent-traffic";
import { UsageDashboard } from "@/components/usage/usage-dashboard";
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
      <PageHeader title="Usage" description="Requests and compute units (CU) used by this project's keys, in UTC. Failed calls cost no CU." />
      <RecentTraffic projectId={access.project.id} />
      <UsageDashboard projectId={access.project.id} period={plan.period} />
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
    </div>
  );
}
