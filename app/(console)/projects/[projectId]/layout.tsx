import type { ReactNode } from "react";
import { AllowanceBanner } from "@/components/console/allowance-banner";
import { projectAccess } from "@/components/console/project-access";
import { Sidebar } from "@/components/console/sidebar";
import { VerifyEmailBanner } from "@/components/console/verify-email-banner";
import { pendingVerification } from "@/lib/auth/email-verification";
import { listProjects } from "@/lib/projects/service";

export const dynamic = "force-dynamic";

export default async function ConsoleLayout({ children, params }: { children: ReactNode; params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const access = await projectAccess(projectId);
  const [projects, unverified] = await Promise.all([listProjects(access.user.id), pendingVerification(access.user.id)]);
  return (
    <div className="min-h-dvh lg:flex">
      <a
        href="#main"
        className="sr-only z-50 rounded-md bg-surface px-3 py-2 text-sm font-medium text-fg shadow focus:not-sr-only focus:fixed focus:top-3 focus:left-3"
      >
        Skip to content
      </a>
      <Sidebar projectId={projectId} email={access.user.email} projects={projects.map((p) => ({ id: p.id, name: p.name }))} />
      <main id="main" tabIndex={-1} className="min-w-0 flex-1 focus:outline-none">
        {unverified ? <VerifyEmailBanner email={unverified.email} /> : null}
        <AllowanceBanner project={access.project} />
        <div className="mx-auto w-full max-w-5xl px-4 py-6 sm:px-6 lg:px-10 lg:py-10">{children}</div>
      </main>
    </div>
  );
}
