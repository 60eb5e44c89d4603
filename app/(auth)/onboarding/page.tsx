import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { OnboardingForm } from "@/components/onboarding/onboarding-form";
import { currentUser } from "@/lib/auth/session";
import { listProjects } from "@/lib/projects/service";

export const metadata: Metadata = { title: "Welcome" };
export const dynamic = "force-dynamic";

export default async function OnboardingPage() {
  const user = await currentUser();
  if (!user) redirect("/sign-in");
  const [first] = await listProjects(user.id);
  if (first) redirect(`/projects/${first.id}`);
  return <OnboardingForm email={user.email} defaultName={user.name ?? ""} />;
}
