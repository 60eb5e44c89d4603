import type { Metadata } from "next";
import { projectAccess } from "@/components/console/project-access";
import { FAMILY_ORDER, FAMILY_TITLES } from "@/components/endpoints/types";
import { EmptyState, PageHeader } from "@/components/ui/page-header";
import { networks } from "@/lib/networks";

export const metadata: Metadata = { title: "Playground" };

export default async function PlaygroundPage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  if (!(await projectAccess(projectId))) return null;
  const catalog = networks();
  return (
    <div className="space-y-8">
      <PageHeader title="Playground" description="Send requests to any endpoint from the browser and inspect the answers." />
      <EmptyState
        title="The playground is on its way"
        icon={
          <svg aria-hidden="true" viewBox="0 0 20 20" className="size-5" fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" strokeLinejoin="round">
            <path d="m7 7-3 3 3 3M13 7l3 3-3 3M11 5l-2 10" />
          </svg>
        }
      >
        <p>Until it arrives, the Overview has a ready-to-paste curl example for your key. These endpoint families are coming:</p>
        <ul className="mt-4 space-y-2 text-left">
          {FAMILY_ORDER.map((family) => {
            const count = catalog.filter((n) => n.family === family).length;
            return (
              <li key={family} className="flex items-center justify-between gap-6 rounded-md border border-line bg-canvas px-3 py-2">
                <span className="font-medium text-fg">{FAMILY_TITLES[family].title}</span>
                <span className="text-xs whitespace-nowrap">
                  {count} network{count === 1 ? "" : "s"}
                </span>
              </li>
            );
          })}
        </ul>
      </EmptyState>
    </div>
  );
}
