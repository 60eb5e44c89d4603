import { hash, verify } from "@node-rs/argon2";
import type { z } from "zod";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { FIELDS, parseInput, type Wording } from "@/lib/validation";
import { startEmailVerification } from "./email-verification";
import { recordSignInFailure, recordSignInSuccess, signInRefusal, takeSignUp } from "./throttle";
import { changePasswordSchema, signUpSchema, type SignUpInput } from "./schema";
import { endSessions, type SessionUser } from "./session";

// A fixed hash to verify against when the email is unknown, so both paths take the same time.
let dummyHash: Promise<string> | undefined;

/** Account input: 400 INVALID_PARAMETER naming the field ("password: Use at least 10 characters"), an absent one too. */
const ACCOUNT: Wording = { ...FIELDS, missing: false };
const parse = <S extends z.ZodType>(schema: S, input: unknown): z.output<S> => parseInput(schema, input, ACCOUNT);

async function insertUser({ email, password }: SignUpInput): Promise<SessionUser> {
  const passwordHash = await hash(password);
  try {
    return await db().user.create({
      data: { id: newId("usr"), email, passwordHash },
      select: { id: true, email: true, name: true },
    });
  } catch (e) {
    if (typeof e === "object" && e !== null && "code" in e && (e as { code: unknown }).code === "P2002") {
      throw new AppError("RESOURCE_ALREADY_EXISTS", "An account with this email already exists. Sign in instead.");
    }
    throw e;
  }
}

/** Creates an account (no sign-up limits: for tests and the admin tool). */
export async function createUser(input: unknown): Promise<SessionUser> {
  return insertUser(parse(signUpSchema, input));
}

/**
 * A sign-up from the console (form or POST /api/sign-up): valid input counts against the sign-up
 * limits (and brings its proof of work when they ask for one) before the password is hashed.
 */
export async function signUp(input: unknown, clientIp: string): Promise<SessionUser> {
  const data = parse(signUpSchema, input);
  await takeSignUp(clientIp, typeof input === "object" && input !== null && "proof" in input ? input.proof : undefined);
  const user = await insertUser(data);
  void startEmailVerification(user);
  return user;
}

export class SignInError extends Error {
  override name = "SignInError";
}

/**
 * Checks an email and password; repeated failures from the client's address (for this email, and
 * over all emails) must wait, with TOO_MANY_REQUESTS naming how long.
 */
export async function verifyCredentials(emailInput: string, password: string, clientIp: string): Promise<SessionUser> {
  const email = emailInput.trim().toLowerCase();
  const refusal = await signInRefusal(email, clientIp);
  if (refusal) throw refusal;
  const user = await db().user.findUnique({
    where: { email },
    select: { id: true, email: true, name: true, passwordHash: true },
  });
  dummyHash ??= hash("blockgate-dummy-password");
  const ok = await verify(user?.passwordHash ?? (await dummyHash), password).catch(() => false);
  if (!user || !user.passwordHash || !ok) {
    await recordSignInFailure(email, clientIp);
    throw new SignInError("Wrong email or password.");
  }
  await recordSignInSuccess(email, clientIp);
  return { id: user.id, email: user.email, name: user.name };
}

/** Finds or creates the user behind a GitHub sign-in (matched by GitHub id, then by email). */
export async function upsertGithubUser(githubId: string, emailInput: string, name: string | null): Promise<SessionUser> {
  const email = emailInput.trim().toLowerCase();
  const select = { id: true, email: true, name: true } as const;
  const byGithub = await db().user.findUnique({ where: { githubId }, select });
  if (byGithub) return byGithub;
  // GitHub signs in only with an address it has verified: that verifies ours too.
  const byEmail = await db().user.findUnique({ where: { email }, select: { ...select, emailVerifiedAt: true } });
  if (byEmail) {
    return db().user.update({ where: { id: byEmail.id }, data: { githubId, emailVerifiedAt: byEmail.emailVerifiedAt ?? new Date() }, select });
  }
  return db().user.create({ data: { id: newId("usr"), email, name, githubId, emailVerifiedAt: new Date() }, select });
}

/** True when the account has a password (accounts made by GitHub sign-in have none to change). */
export async function hasPassword(userId: string): Promise<boolean> {
  const user = await db().user.findUnique({ where: { id: userId }, select: { passwordHash: true } });
  return Boolean(user?.passwordHash);
}

/**
 * Sets a new password once the current one is confirmed (wrong guesses are throttled like
 * sign-ins from the client's address), and ends every other session of the account: whoever
 * signed in with the old password is signed out. The session making the change stays.
 */
export async function changePassword(user: SessionUser, sessionId: string, input: unknown, clientIp: string): Promise<void> {
  const { currentPassword, newPassword } = parse(changePasswordSchema, input);
  try {
    await verifyCredentials(user.email, currentPassword, clientIp);
  } catch (e) {
    if (e instanceof SignInError) throw new AppError("INVALID_PARAMETER", "currentPassword: That is not your current password.");
    throw e;
  }
  const passwordHash = await hash(newPassword);
  await db().$transaction([db().user.update({ where: { id: user.id }, data: { passwordHash } }), endSessions(user.id, sessionId)]);
}
