"use server";

import { headers } from "next/headers";
import { failure, ok, type ActionResult } from "@/components/action-result";
import { signInSchema } from "@/lib/auth/schema";
import { SignInError, signUp, verifyCredentials } from "@/lib/auth/users";
import { clientIp } from "@/lib/client-ip";
import { AppError } from "@/lib/errors";
import { MESSAGE_ONLY, parseInput } from "@/lib/validation";

/** Sign-up from the console form (the same service call, limits and proof of work as POST /api/sign-up). */
export async function signUpAction(input: { email: string; password: string; proof?: { challenge: string; nonce: string } }): Promise<ActionResult> {
  try {
    await signUp(input, clientIp(await headers()));
    return ok(null);
  } catch (e) {
    return failure(e);
  }
}

/**
 * Checks the credentials before the form calls next-auth's signIn(), which answers a wrong
 * password with HTTP 401 (logged by the browser as a console error). Same service call, same
 * throttle and messages as the credentials provider; it creates no session.
 */
export async function checkCredentialsAction(input: { email: string; password: string }): Promise<ActionResult> {
  try {
    const { email, password } = parseInput(signInSchema, input, MESSAGE_ONLY);
    await verifyCredentials(email, password, clientIp(await headers()));
    return ok(null);
  } catch (e) {
    if (e instanceof SignInError) return failure(new AppError("AUTHENTICATION_FAILED", e.message));
    return failure(e);
  }
}
