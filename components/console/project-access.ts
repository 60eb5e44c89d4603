import { notFound, redirect } from "next/navigation";
import { cache } from "react";
import { currentUser, type SessionUser } from "@/lib/auth/session";
import { getEnv } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { getProjectForUser } from "@/lib/projects/service";

export type ConsoleProject = Awaited<ReturnType<typeof getProjectForUser>>;

/**
 * For console layouts and pages (server only), one lookup per request shared by the layout and
 * the page it renders. Signed out: redirects to /sign-in. A project that does not exist or
 * belongs to another user: notFound(), the same 404 for both. Next.js renders a layout and its
 * page in parallel, so every page calls this too: a page never loads another user's data.
 */
export const projectAccess = cache(async (projectId: string): Promise<{ user: SessionUser; project: ConsoleProject }> => {
  const user = await currentUser();
  if (!user) redirect("/sign-in");
  try {
    return { user, project: await getProjectForUser(user.id, projectId) };
  } catch (e) {
    if (e instanceof AppError && e.code === "RESOURCE_NOT_FOUND") notFound();
    throw e;
  }
});

/** The public origin endpoints are shown under. */
export function publicOrigin(): string {
  return getEnv().PUBLIC_URL;
}
