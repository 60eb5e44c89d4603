import type { Metadata } from "next";
import { AccountSection } from "@/components/account/account-section";
import { projectAccess } from "@/components/console/project-access";
import { CreateProjectForm } from "@/components/settings/create-project-form";
import { RenameProjectForm } from "@/components/settings/rename-project-form";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { hasPassword } from "@/lib/auth/users";
import { PLANS } from "@/lib/plans";

export const metadata: Metadata = { title: "Settings" };

export default async function SettingsPage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const { project, user } = await projectAccess(projectId);
  const details = [
    { label: "Project ID", value: <code>{project.id}</code> },
    { label: "Plan", value: PLANS[project.plan].label },
    { label: "Organisation", value: project.organization ?? "—" },
    { label: "Created", value: formatDateTime(project.createdAt) },
  ];
  return (
    <div className="space-y-8">
      <PageHeader title="Settings" description="Manage this project, start another one, or change your account's password and sessions." />
      <RenameProjectForm projectId={project.id} name={project.name} />
      <Card aria-labelledby="details-title">
        <CardHeader titleId="details-title" title="Details" />
        <CardBody>
          <dl className="grid gap-4 sm:grid-cols-2">
            {details.map((d) => (
              <div key={d.label} className="space-y-1">
                <dt className="text-xs font-medium text-muted">{d.label}</dt>
                <dd className="text-sm break-all text-fg">{d.value}</dd>
              </div>
            ))}
          </dl>
        </CardBody>
      </Card>
      <CreateProjectForm />
      <AccountSection email={user.email} hasPassword={await hasPassword(user.id)} />
    </div>
  );
}
