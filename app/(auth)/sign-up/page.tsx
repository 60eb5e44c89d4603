import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { SignUpForm } from "@/components/auth/sign-up-form";
import { githubEnabled } from "@/lib/auth/options";
import { currentUser } from "@/lib/auth/session";

export const metadata: Metadata = { title: "Create your account" };
export const dynamic = "force-dynamic";

export default async function SignUpPage() {
  if (await currentUser()) redirect("/");
  return <SignUpForm github={githubEnabled()} />;
}
