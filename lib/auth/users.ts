import { hash, verify } from "@node-rs/argon2";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { recordFailure, recordSuccess, retryAfterMs } from "./throttle";
import { signUpSchema } from "./schema";

export interface SessionUser {
  id: string;
  email: string;
  name: string | null;
}

// A fixed hash to verify against when the email is unknown, so both paths take the same time.
let dummyHash: Promise<string> | undefined;

export async function createUser(input: unknown): Promise<SessionUser> {
  const parsed = signUpSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AppError("INVALID_PARAMETER", `${issue?.path.join(".") || "input"}: ${issue?.message ?? "invalid"}`);
  }
  const { email, password } = parsed.data;
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

export class SignInError extends Error {
  override name = "SignInError";
}

/** Checks an email and password; slows down repeated failures for the same email. */
export async function verifyCredentials(emailInput: string, password: string): Promise<SessionUser> {
  const email = emailInput.trim().toLowerCase();
  const wait = retryAfterMs(email);
  if (wait > 0) {
    const seconds = Math.ceil(wait / 1000);
    throw new SignInError(`Too many failed sign-ins. Try again in ${seconds} ${seconds === 1 ? "second" : "seconds"}.`);
  }
  const user = await db().user.findUnique({
    where: { email },
    select: { id: true, email: true, name: true, passwordHash: true },
  });
  dummyHash ??= hash("blockgate-dummy-password");
  const ok = await verify(user?.passwordHash ?? (await dummyHash), password).catch(() => false);
  if (!user || !user.passwordHash || !ok) {
    recordFailure(email);
    throw new SignInError("Wrong email or password.");
  }
  recordSuccess(email);
  return { id: user.id, email: user.email, name: user.name };
}

/** Finds or creates the user behind a GitHub sign-in (matched by GitHub id, then by email). */
export async function upsertGithubUser(githubId: string, emailInput: string, name: string | null): Promise<SessionUser> {
  const email = emailInput.trim().toLowerCase();
  const select = { id: true, email: true, name: true } as const;
  const byGithub = await db().user.findUnique({ where: { githubId }, select });
  if (byGithub) return byGithub;
  const byEmail = await db().user.findUnique({ where: { email }, select });
  if (byEmail) return db().user.update({ where: { id: byEmail.id }, data: { githubId }, select });
  return db().user.create({ data: { id: newId("usr"), email, name, githubId }, select });
}
