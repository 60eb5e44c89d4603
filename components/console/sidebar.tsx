"use client";

import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { signOut } from "next-auth/react";
import { useEffect, useId, useState } from "react";
import { Logo } from "@/components/brand/logo";
import { ThemeToggle } from "@/components/theme/theme-toggle";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { icons } from "./nav-icons";

export interface SidebarProps {
  projectId: string;
  projects: { id: string; name: string }[];
  email: string;
}

const SECTIONS = [
  { segment: "", label: "Overview", icon: icons.overview },
  { segment: "playground", label: "Playground", icon: icons.playground },
  { segment: "webhooks", label: "Webhooks", icon: icons.webhooks },
  { segment: "usage", label: "Usage", icon: icons.usage },
  { segment: "requests", label: "Requests", icon: icons.requests },
  { segment: "keys", label: "Keys", icon: icons.keys },
  { segment: "plan", label: "Plans", icon: icons.plan },
  { segment: "settings", label: "Settings", icon: icons.settings },
] as const;

function sectionOf(pathname: string, projectId: string): string {
  const rest = pathname.slice(`/projects/${projectId}`.length).replace(/^\/+/, "");
  return rest.split("/")[0] ?? "";
}

export function Sidebar({ projectId, projects, email }: SidebarProps) {
  const pathname = usePathname() ?? "";
  const current = sectionOf(pathname, projectId);
  // The mobile menu is open only for the path it was opened on, so navigating closes it.
  const [openOn, setOpenOn] = useState<string | null>(null);
  const open = openOn === pathname;
  const panelId = "console-navigation";

  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") setOpenOn(null);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [open]);

  const base = `/projects/${projectId}`;

  return (
    <>
      {/* Narrow screens: a top bar with a menu button; the sidebar opens as a panel. */}
      <div className="sticky top-0 z-30 flex h-14 items-center justify-between border-b border-line bg-surface/95 px-4 backdrop-blur lg:hidden">
        <Link href={base} className="rounded-md">
          <Logo />
        </Link>
        <Button
          variant="ghost"
          size="sm"
          aria-expanded={open}
          aria-controls={panelId}
          onClick={() => setOpenOn(open ? null : pathname)}
          icon={open ? icons.close : icons.menu}
        >
          Menu
        </Button>
      </div>
      {open ? <div aria-hidden="true" className="fixed inset-0 top-14 z-20 bg-black/40 lg:hidden" onClick={() => setOpenOn(null)} /> : null}

      <aside
        id={panelId}
        aria-label="Console"
        className={cn(
          "z-20 flex-col border-line bg-surface lg:sticky lg:top-0 lg:flex lg:h-dvh lg:w-64 lg:shrink-0 lg:overflow-y-auto lg:border-r",
          open ? "max-lg:fixed max-lg:inset-x-0 max-lg:top-14 max-lg:bottom-0 max-lg:flex max-lg:overflow-y-auto max-lg:shadow-xl sm:max-lg:right-auto sm:max-lg:w-72 sm:max-lg:border-r" : "max-lg:hidden",
        )}
      >
        <div className="hidden h-16 items-center px-5 lg:flex">
          <Link href={base} className="rounded-md">
            <Logo />
          </Link>
        </div>
        <ProjectSwitcher projectId={projectId} projects={projects} current={current} />
        <SectionNav base={base} current={current} />
        <AccountFooter base={base} email={email} />
      </aside>
    </>
  );
}

/** The project picker (the same section of the chosen project) and the way to a new project. */
function ProjectSwitcher({ projectId, projects, current }: { projectId: string; projects: SidebarProps["projects"]; current: string }) {
  const router = useRouter();
  const switcherId = useId();
  return (
    <div className="space-y-1.5 px-4 pt-4 lg:pt-1">
      <label htmlFor={switcherId} className="block text-xs font-medium text-muted">
        Project
      </label>
      <div className="relative">
        <select
          id={switcherId}
          value={projectId}
          onChange={(e) => {
            const section = current ? `/${current}` : "";
            router.push(`/projects/${e.target.value}${section}`);
          }}
          className="block h-9 w-full appearance-none truncate rounded-md border border-line-strong bg-surface pr-8 pl-3 text-sm font-medium text-fg shadow-xs hover:bg-subtle"
        >
          {projects.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
        <svg aria-hidden="true" viewBox="0 0 20 20" className="pointer-events-none absolute top-1/2 right-2.5 size-4 -translate-y-1/2 text-muted" fill="none" stroke="currentColor" strokeWidth="1.6">
          <path d="m7 8 3-3 3 3M7 12l3 3 3-3" strokeLinecap="round" strokeLinejoin="round" />
        </svg>
      </div>
      <Link href={`/projects/${projectId}/settings#new-project`} className="flex items-center gap-2 rounded-md px-2 py-1.5 text-sm text-muted hover:bg-subtle hover:text-fg">
        {icons.plus}
        New project
      </Link>
    </div>
  );
}

function SectionNav({ base, current }: { base: string; current: string }) {
  return (
    <nav aria-label="Project sections" className="mt-3 flex-1 px-3">
      <ul className="space-y-0.5">
        {SECTIONS.map((s) => {
          const active = current === s.segment;
          return (
            <li key={s.label}>
              <Link
                href={s.segment ? `${base}/${s.segment}` : base}
                aria-current={active ? "page" : undefined}
                className={cn(
                  "flex items-center gap-2.5 rounded-md px-2.5 py-2 text-sm font-medium transition-colors",
                  active ? "bg-accent-soft text-accent-text" : "text-muted hover:bg-subtle hover:text-fg",
                )}
              >
                {s.icon}
                {s.label}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}

/** Who is signed in (a link to the account settings), the theme, and signing out. */
function AccountFooter({ base, email }: { base: string; email: string }) {
  const [signingOut, setSigningOut] = useState(false);
  return (
    <div className="border-t border-line p-3">
      <div className="flex items-center justify-between gap-2 px-2 pb-2">
        <Link href={`${base}/settings#account`} className="min-w-0 truncate rounded-md text-sm text-fg hover:underline" title={`${email}: your account`}>
          <span className="sr-only">Your account, signed in as </span>
          {email}
        </Link>
        <ThemeToggle className="shrink-0" />
      </div>
      <Button
        variant="ghost"
        size="sm"
        className="w-full justify-start"
        icon={icons.signOut}
        pending={signingOut}
        onClick={() => {
          setSigningOut(true);
          void signOut({ callbackUrl: "/sign-in" });
        }}
      >
        Sign out
      </Button>
    </div>
  );
}
