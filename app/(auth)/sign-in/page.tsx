import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { SignInForm } from "@/components/auth/sign-in-form";
import { githubEnabled } from "@/lib/auth/options";
import { currentUser } from "@/lib/auth/session";

export const metadata: Metadata = { title: "Sign in" };
export const dynamic = "force-dynamic";

/** Errors next-auth puts in ?error= when it sends the browser back here. */
function messageFor(code: string | undefined): string | undefined {
  switch (code) {
    case undefined:
    case "":
      return undefined;
    case "GitHubEmail":
      return "Your GitHub account has no email address we can use. Add a public or verified email on GitHub, or sign up with email and password.";
    case "OAuthAccountNotLinked":
      return "This email is already used by another sign-in method.";
    case "AccessDenied":
      return "Sign-in was cancelled or denied.";
    case "SessionRequired":
      return "Sign in to continue.";
    case "CredentialsSignin":
      return "Wrong email or password.";
    default:
      return "Sign-in failed. Please try again.";
  }
}

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  if (await currentUser()) redirect("/");
  const { error } = await searchParams;
  return <SignInForm github={githubEnabled()} initialError={messageFor(typeof error === "string" ? error : undefined)} />;
}
