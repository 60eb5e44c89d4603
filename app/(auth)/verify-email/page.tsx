import type { Metadata } from "next";
import Link from "next/link";
import { AuthCard, textLink } from "@/components/auth/auth-card";
import { buttonClasses } from "@/components/ui/button";
import { verifyEmail, type VerificationOutcome } from "@/lib/auth/email-verification";

export const metadata: Metadata = { title: "Verify email" };
export const dynamic = "force-dynamic";

const OUTCOMES: Record<VerificationOutcome, { title: string; description: string }> = {
  verified: { title: "Email verified", description: "Thank you: your email address is confirmed, and every part of the console is open to you." },
  expired: { title: "This link has expired", description: "Verification links work for 24 hours. Sign in and use “Resend” in the banner for a new one." },
  invalid: {
    title: "This link does not work",
    description: "It may have been used already, or copied only in part. Sign in: if your address still needs verifying, the banner offers a new link.",
  },
};

export default async function VerifyEmailPage({ searchParams }: { searchParams: Promise<{ token?: string | string[] }> }) {
  const { token } = await searchParams;
  const outcome = await verifyEmail(typeof token === "string" ? token : "");
  const { title, description } = OUTCOMES[outcome];
  return (
    <AuthCard title={title} description={description} footer={outcome === "verified" ? null : <Link className={textLink} href="/sign-in">Sign in</Link>}>
      <Link href="/" className={buttonClasses("primary", "md", "w-full")} data-testid={`verify-email-${outcome}`}>
        Go to the console
      </Link>
    </AuthCard>
  );
}
