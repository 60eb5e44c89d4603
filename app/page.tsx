import { redirect } from "next/navigation";
import { currentUser } from "@/lib/auth/session";
import { listProjects } from "@/lib/projects/service";

export const dynamic = "force-dynamic";

/** Sends each visitor where they belong: sign-in, onboarding, or their first project. */
export default async function Home() {
  const user = await currentUser();
  if (!user) redirect("/sign-in");
  const [first] = await listProjects(user.id);
  if (!first) redirect("/onboarding");
  redirect(`/projects/${first.id}`);
}
