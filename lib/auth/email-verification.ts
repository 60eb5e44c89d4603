import { randomBytes } from "node:crypto";
import { sha256Hex } from "@/lib/crypto";
import { db } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { componentLogger, errorMessage } from "@/lib/log";
import { mailEnabled, mailServer, noteMailDisabled, sendMail } from "@/lib/mail";
import { SharedBuckets } from "@/lib/limits/shared";
import { retryAfterSeconds, type BucketLimit } from "@/lib/rate-limit";
import { sharedLimits } from "@/lib/services";

/**
 * Email verification, required only when Blockgate can send mail (SMTP_URL). A new account gets
 * a link valid for 24 hours; only the SHA-256 of its token is stored. Until the address is
 * verified the account can use its first project fully but cannot create another one, and the
 * console shows a banner with a "resend" button. Accounts from GitHub sign-in come verified.
 */

export const VERIFICATION_LINK_TTL_MS = 24 * 60 * 60_000;

/** Verification mail per account: 3 at once, then one every 10 minutes. */
export const RESEND_LIMIT: BucketLimit = { burst: 3, refillMs: 10 * 60_000 };

/** 32 random bytes, base64url. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

// Per process (the route handler and the server actions count the same sends), and held with the
// other web processes through the shared limits.
const sends = sharedLimits("verification-mail", (shared) => new SharedBuckets("verification-mail", RESEND_LIMIT, shared));

const log = () => componentLogger("auth");

/** True when new accounts must verify their email address (SMTP_URL is set). */
export function verificationRequired(): boolean {
  return mailEnabled();
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Stores a new link for the user and mails it. Rejects when the mail server fails. */
async function issueLink(user: { id: string; email: string }): Promise<void> {
  const token = randomBytes(32).toString("base64url");
  const now = new Date();
  // Links already sent stay valid until they expire; expired ones go now.
  await db().emailVerification.deleteMany({ where: { userId: user.id, expiresAt: { lt: now } } });
  await db().emailVerification.create({
    data: { tokenHash: sha256Hex(token), userId: user.id, expiresAt: new Date(now.getTime() + VERIFICATION_LINK_TTL_MS) },
  });
  const link = `${getEnv().PUBLIC_URL}/verify-email?token=${token}`;
  await sendMail({
    to: user.email,
    subject: "Verify your email address for Blockgate",
    text: `Open this link to verify your email address:\n\n${link}\n\nThe link works for 24 hours. If you did not sign up for Blockgate, ignore this message.\n`,
    html: `<p>Open this link to verify your email address:</p><p><a href="${escapeHtml(link)}">Verify my email address</a></p><p>The link works for 24 hours. If you did not sign up for Blockgate, ignore this message.</p>`,
  });
}

/**
 * After a sign-up: mails the first link when verification is required (in the background: the
 * sign-up does not wait for the mail server, and a failure leaves "resend" to the user), or notes
 * once in the log that no verification happens.
 */
export function startEmailVerification(user: { id: string; email: string }): Promise<void> {
  if (!verificationRequired()) {
    noteMailDisabled();
    return Promise.resolve();
  }
  return sends()
    .add(user.id)
    .then(() => issueLink(user))
    .catch((e: unknown) => {
    log().warn({ err: errorMessage(e), userId: user.id, server: mailServer() }, "the verification mail of a new account could not be sent; the console offers to resend it");
  });
}

/**
 * "Resend" from the console banner: a new link (earlier ones keep working until they expire).
 * 429 with Retry-After past RESEND_LIMIT; 503 when the mail server cannot take it.
 */
export async function resendVerificationEmail(userId: string): Promise<{ email: string }> {
  if (!verificationRequired()) throw new AppError("REJECTED", "This server sends no mail, so email addresses need no verification.");
  const user = await db().user.findUnique({ where: { id: userId }, select: { id: true, email: true, emailVerifiedAt: true } });
  if (!user) throw new AppError("NO_AUTHENTICATION_FOUND", "Sign in to continue.");
  if (user.emailVerifiedAt) throw new AppError("REJECTED", "Your email address is already verified.");
  const wait = await sends().consume(userId);
  if (wait > 0) {
    const seconds = retryAfterSeconds(wait);
    throw new AppError("TOO_MANY_REQUESTS", `A verification email was sent recently. You can ask for another in ${Math.ceil(seconds / 60)} min.`, {
      "Retry-After": String(seconds),
    });
  }
  try {
    await issueLink(user);
  } catch (e) {
    await sends().refund(userId);
    log().warn({ err: errorMessage(e), userId, server: mailServer() }, "a verification mail could not be sent");
    throw new AppError("UNAVAILABLE", "The verification email could not be sent right now. Try again in a few minutes.", { "Retry-After": "60" });
  }
  return { email: user.email };
}

export type VerificationOutcome = "verified" | "expired" | "invalid";

/**
 * Follows a link: marks the address verified and drops the account's other links. An unknown
 * token (never issued, mistyped, or already used) is "invalid"; one past its 24 hours "expired".
 */
export async function verifyEmail(token: string, now = new Date()): Promise<VerificationOutcome> {
  if (!TOKEN_PATTERN.test(token)) return "invalid";
  return db().$transaction(async (tx) => {
    const link = await tx.emailVerification.findUnique({ where: { tokenHash: sha256Hex(token) }, select: { userId: true, expiresAt: true } });
    if (!link) return "invalid";
    if (link.expiresAt <= now) {
      await tx.emailVerification.delete({ where: { tokenHash: sha256Hex(token) } });
      return "expired";
    }
    await tx.user.updateMany({ where: { id: link.userId, emailVerifiedAt: null }, data: { emailVerifiedAt: now } });
    await tx.emailVerification.deleteMany({ where: { userId: link.userId } });
    return "verified";
  });
}

/** For the console banner: the address still to verify, or null when nothing is asked of the user. */
export async function pendingVerification(userId: string): Promise<{ email: string } | null> {
  if (!verificationRequired()) return null;
  const user = await db().user.findUnique({ where: { id: userId }, select: { email: true, emailVerifiedAt: true } });
  return user && !user.emailVerifiedAt ? { email: user.email } : null;
}
