import type { NextAuthOptions, Session } from "next-auth";
import { encode, type JWT } from "next-auth/jwt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, disconnectDb } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import type { AppError } from "@/lib/errors";
import { connectTestDatabase, uniqueEmail, withDeadDatabase } from "@/lib/testing/harness";
import { authOptions } from "./options";
import { activeSession, endSessions, SESSION_MAX_AGE_S, sessionOfCookie, startSession } from "./session";
import { changePassword, createUser, verifyCredentials } from "./users";

beforeAll(async () => {
  await connectTestDatabase();
});
afterAll(async () => disconnectDb());

const PASSWORD = "the first password";
type Callbacks = Required<NonNullable<NextAuthOptions["callbacks"]>>;
type Events = Required<NonNullable<NextAuthOptions["events"]>>;

/** What next-auth does at a credentials sign-in: the jwt callback with the user, then the token encoded into the cookie. */
async function signIn(user: { id: string; email: string; name: string | null }): Promise<{ cookie: string; token: JWT }> {
  const jwt = authOptions().callbacks!.jwt as Callbacks["jwt"];
  const token = await jwt({ token: { email: user.email, sub: user.id }, user: { ...user, id: user.id }, account: null });
  return { cookie: await encode({ token, secret: getEnv().NEXTAUTH_SECRET }), token };
}

/** GET /api/auth/session's body for a token: next-auth's session callback. */
async function sessionEndpoint(token: JWT): Promise<Session> {
  const session = authOptions().callbacks!.session as Callbacks["session"];
  return session({ session: { user: { email: token.email }, expires: new Date(Date.now() + 86_400_000).toISOString() }, token } as never);
}

const signOut = (token: JWT) => (authOptions().events!.signOut as Events["signOut"])({ token } as never);

async function newUser(tag: string) {
  return createUser({ email: uniqueEmail(tag), password: PASSWORD });
}

describe("stored sessions", () => {
  it("a sign-in's cookie names a stored session; signed out, the saved cookie counts for nothing, here and at /api/auth/session", async () => {
    const user = await newUser("signout");
    const { cookie, token } = await signIn(user);
    expect(token.sid).toMatch(/^ses_/);
    expect(await db().userSession.count({ where: { id: token.sid, userId: user.id } })).toBe(1);
    expect(await sessionOfCookie(cookie)).toEqual({ sessionId: token.sid, user: { id: user.id, email: user.email, name: null } });
    expect((await sessionEndpoint(token)).user).toMatchObject({ id: user.id, email: user.email });

    await signOut(token);
    expect(await db().userSession.count({ where: { id: token.sid } })).toBe(0);
    expect(await sessionOfCookie(cookie)).toBeNull();
    expect(await sessionEndpoint(token)).toEqual({});
  });

  it("while the database is unreachable, /api/auth/session still answers the session: next-auth would drop the cookie on an error", async () => {
    const user = await newUser("outage");
    const { token } = await signIn(user);
    const body = await withDeadDatabase(() => sessionEndpoint(token));
    expect(body.user).toMatchObject({ email: user.email });
  });

  it("refuses cookies from before sessions were stored (no sid), cookies not made with the secret, and expired ones", async () => {
    const user = await newUser("old");
    const secret = getEnv().NEXTAUTH_SECRET;
    expect(await sessionOfCookie(await encode({ token: { sub: user.id, email: user.email }, secret }))).toBeNull();
    const sid = await startSession(user.id);
    expect(await sessionOfCookie(await encode({ token: { sid }, secret: "another secret of thirty-two characters" }))).toBeNull();
    expect(await sessionOfCookie(await encode({ token: { sid }, secret, maxAge: -60 }))).toBeNull();
    expect(await sessionOfCookie("garbage")).toBeNull();
    expect(await sessionOfCookie(await encode({ token: { sid }, secret }))).not.toBeNull();
  });

  it("signing out everywhere ends every session of the user and no one else's", async () => {
    const user = await newUser("everywhere");
    const other = await newUser("bystander");
    const sessions = await Promise.all([signIn(user), signIn(user), signIn(other)]);
    await endSessions(user.id);
    expect(await sessionOfCookie(sessions[0].cookie)).toBeNull();
    expect(await sessionOfCookie(sessions[1].cookie)).toBeNull();
    expect((await sessionOfCookie(sessions[2].cookie))?.user.id).toBe(other.id);
  });

  it("a password change ends the user's other sessions and keeps the one making it", async () => {
    const user = await newUser("password");
    const [current, elsewhere] = await Promise.all([signIn(user), signIn(user)]);
    await changePassword(user, current.token.sid!, { currentPassword: PASSWORD, newPassword: "the second password", confirmPassword: "the second password" }, "203.0.113.50");
    expect((await sessionOfCookie(current.cookie))?.user.id).toBe(user.id);
    expect(await sessionOfCookie(elsewhere.cookie)).toBeNull();
    expect((await verifyCredentials(user.email, "the second password", "203.0.113.50")).id).toBe(user.id);
    await expect(verifyCredentials(user.email, PASSWORD, "203.0.113.51")).rejects.toThrow("Wrong email or password.");
  });

  it("a password change with a wrong current password, a short or unconfirmed new one changes nothing and names the field", async () => {
    const user = await newUser("password-bad");
    const [current, elsewhere] = await Promise.all([signIn(user), signIn(user)]);
    const attempt = (input: Record<string, string>) =>
      changePassword(user, current.token.sid!, input, "203.0.113.52").then(
        () => null,
        (e: AppError) => ({ code: e.code, message: e.message }),
      );
    expect(await attempt({ currentPassword: "not it at all", newPassword: "the second password", confirmPassword: "the second password" })).toEqual({
      code: "INVALID_PARAMETER",
      message: "currentPassword: That is not your current password.",
    });
    expect(await attempt({ currentPassword: PASSWORD, newPassword: "short", confirmPassword: "short" })).toEqual({ code: "INVALID_PARAMETER", message: "newPassword: Use at least 10 characters" });
    expect(await attempt({ currentPassword: PASSWORD, newPassword: "the second password", confirmPassword: "the 2nd password" })).toEqual({
      code: "INVALID_PARAMETER",
      message: "confirmPassword: The two new passwords differ",
    });
    expect((await verifyCredentials(user.email, PASSWORD, "203.0.113.53")).id).toBe(user.id);
    expect(await sessionOfCookie(elsewhere.cookie)).not.toBeNull();
  });

  it("notes a session's use at most hourly, and a sign-in deletes sessions unused for longer than a cookie lives", async () => {
    const user = await newUser("expiry");
    const [fresh, idle, expired] = await Promise.all([startSession(user.id), startSession(user.id), startSession(user.id)]);
    const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000);
    await db().userSession.update({ where: { id: idle }, data: { lastSeenAt: hoursAgo(2) } });
    await db().userSession.update({ where: { id: expired }, data: { lastSeenAt: hoursAgo(SESSION_MAX_AGE_S / 3600 + 2) } });
    const before = (await db().userSession.findUniqueOrThrow({ where: { id: fresh } })).lastSeenAt;

    expect(await activeSession(fresh)).not.toBeNull();
    expect(await activeSession(idle)).not.toBeNull();
    await expect.poll(async () => (await db().userSession.findUniqueOrThrow({ where: { id: idle } })).lastSeenAt.getTime()).toBeGreaterThan(hoursAgo(1).getTime());
    expect((await db().userSession.findUniqueOrThrow({ where: { id: fresh } })).lastSeenAt).toEqual(before);

    await startSession((await newUser("another")).id);
    expect(await db().userSession.count({ where: { id: { in: [fresh, idle, expired] } } })).toBe(2);
    expect(await db().userSession.count({ where: { id: expired } })).toBe(0);
  });
});
