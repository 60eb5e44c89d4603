"use server";

import { headers } from "next/headers";
import { failure, ok, type ActionResult } from "@/components/action-result";
import { currentSession, endSessions } from "@/lib/auth/session";
import { changePassword } from "@/lib/auth/users";
import { clientIp } from "@/lib/client-ip";
import { AppError } from "@/lib/errors";

const signedOut = () => failure(new AppError("NO_AUTHENTICATION_FOUND", "Your session has ended. Sign in again."));

/** Changes the password (a wrong current password comes back as a field error, not an HTTP 400) and signs out every other session. */
export async function changePasswordAction(input: { currentPassword: string; newPassword: string; confirmPassword: string }): Promise<ActionResult> {
  try {
    const session = await currentSession();
    if (!session) return signedOut();
    await changePassword(session.user, session.sessionId, input, clientIp(await headers()));
    return ok(null);
  } catch (e) {
    return failure(e);
  }
}

/** Ends every session of the account, this one included; the browser then signs out and goes to sign-in. */
export async function signOutEverywhereAction(): Promise<ActionResult> {
  try {
    const session = await currentSession();
    if (!session) return signedOut();
    await endSessions(session.user.id);
    return ok(null);
  } catch (e) {
    return failure(e);
  }
}
