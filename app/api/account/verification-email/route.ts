import { withUser } from "@/lib/api/route";
import { resendVerificationEmail } from "@/lib/auth/email-verification";

/** "Resend" in the console banner: mails a new verification link (rate limited per account). */
export const POST = withUser(async (_req, { user }) => Response.json(await resendVerificationEmail(user.id), { status: 202 }));
