import { notFound, redirect } from "next/navigation";
import { cache } from "react";
import type { SessionUser } from "@/lib/auth/users";
import { currentUser } from "@/lib/auth/session";
import { getEnv } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { getProjectForUser } from "@/lib/projects/service";

export type ConsoleProject = Awaited<ReturnType<typeof getProjectForUser>>;

type Access = { kind: "ok"; user: SessionUser; project: ConsoleProject } | { kind: "signed-out" } | { kind: "forbidden"; user: SessionUser } | { kind: "not-found" };

/** One lookup per request, shared by the console layout and the page it renders. */
const loadAccess = cache(async (projectId: string): Promise<Access> => {
  const user = await currentUser();
  if (!user) return { kind: "signed-out" };
  try {
    return { kind: "ok", user, project: await getProjectForUser(user.id, projectId) };
  } catch (e) {
    if (e instanceof AppError && e.code === "PERMISSION_DENIED") return { kind: "forbidden", user };
    if (e instanceof AppError && e.code === "RESOURCE_NOT_FOUND") return { kind: "not-found" };
    throw e;
  }
});

/**
 * For console layouts and pages (server only). Signed out: redirects to /sign-in; unknown
 * project: notFound(). Another user's project: null, and the layout shows the 403 view.
 * Next.js renders a layout and its page in parallel, so every page must call this too and
 * render nothing when it returns null: the page must never load another user's data.
 */
export async function projectAccess(projectId: string): Promise<{ user: SessionUser; project: ConsoleProject } | null> {
  const access = await loadAccess(projectId);
  switch (access.kind) {
    case "signed-out":
      redirect("/sign-in");
    case "not-found":
      notFound();
    case "forbidden":
      return null;
    case "ok":
      return { user: access.user, project: access.project };
  }
}

/** The public origin endpoints are shown under. */
export function publicOrigin(): string {
  return getEnv().PUBLIC_URL;
}
