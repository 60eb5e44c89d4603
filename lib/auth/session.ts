import { cookies } from "next/headers";
import { decode } from "next-auth/jwt";
import { db } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { componentLogger } from "@/lib/log";

/**
 * Console sessions: the cookie is a next-auth JWT naming a row of user_sessions (`sid`), and every
 * check reads that row with its user, so a session ends on the server the moment its row goes.
 */

/** The signed-in user, as every console check answers it. */
export interface SessionUser {
  id: string;
  email: string;
  name: string | null;
}

/** A session cookie lasts this long after it was last renewed (next-auth renews it as the console is used). */
export const SESSION_MAX_AGE_S = 30 * 24 * 60 * 60;

/** lastSeenAt is moved forward at most this often, so checking a session stays a read. */
const TOUCH_INTERVAL_MS = 60 * 60_000;

/**
 * A row not seen for longer than its cookie can live is of no use: its cookie has expired (a cookie
 * is renewed only when its session is checked, which moves lastSeenAt at most TOUCH_INTERVAL_MS late).
 */
const EXPIRED_AFTER_MS = SESSION_MAX_AGE_S * 1000 + TOUCH_INTERVAL_MS;

/** next-auth's own name for its session cookie (Secure-prefixed over https). */
export function sessionCookieName(): string {
  return `${getEnv().PUBLIC_URL.startsWith("https://") ? "__Secure-" : ""}next-auth.session-token`;
}

/** A new session for a user signing in; deletes every expired one first, so the table stays bounded. */
export async function startSession(userId: string): Promise<string> {
  await db().userSession.deleteMany({ where: { lastSeenAt: { lt: new Date(Date.now() - EXPIRED_AFTER_MS) } } });
  const { id } = await db().userSession.create({ data: { id: newId("ses"), userId }, select: { id: true } });
  return id;
}

/** Ends one session (sign-out). */
export async function endSession(sessionId: string): Promise<void> {
  await db().userSession.deleteMany({ where: { id: sessionId } });
}

/** Ends all of a user's sessions, or all but `except`; lazy, so it can join a transaction. */
export function endSessions(userId: string, except?: string) {
  return db().userSession.deleteMany({ where: { userId, ...(except === undefined ? {} : { id: { not: except } }) } });
}

/** The user of a session that has not ended (null: ended, expired, or its user is gone), in one query. */
export async function activeSession(sessionId: string): Promise<SessionUser | null> {
  const [row] = await db().$queryRaw<(SessionUser & { lastSeenAt: Date })[]>`
    SELECT u.id, u.email, u.name, s.last_seen_at AS "lastSeenAt"
    FROM user_sessions s JOIN users u ON u.id = s.user_id
    WHERE s.id = ${sessionId}`;
  if (!row) return null;
  const now = Date.now();
  if (now - row.lastSeenAt.getTime() > TOUCH_INTERVAL_MS) {
    // Not awaited: the request needs only the read. A failure leaves the session as it was.
    db()
      .userSession.updateMany({ where: { id: sessionId }, data: { lastSeenAt: new Date(now) } })
      .catch((e: unknown) => componentLogger("auth").warn({ err: e }, "could not note a session's last use"));
  }
  return { id: row.id, email: row.email, name: row.name };
}

/** The session id a decoded next-auth token carries (none in cookies from before sessions were stored: those count as ended). */
export function sessionIdOf(token: { sid?: unknown } | null): string | null {
  return typeof token?.sid === "string" ? token.sid : null;
}

/** The user and session a session cookie's value stands for; null when it is not valid or its session ended. */
export async function sessionOfCookie(value: string | undefined): Promise<{ sessionId: string; user: SessionUser } | null> {
  if (!value) return null;
  // Refused when not made with our secret, or past its expiry.
  const token = await decode({ token: value, secret: getEnv().NEXTAUTH_SECRET }).catch(() => null);
  const sessionId = sessionIdOf(token);
  const user = sessionId === null ? null : await activeSession(sessionId);
  return user && sessionId !== null ? { sessionId, user } : null;
}

/** The signed-in user and their session's id, from this request's cookie; null when signed out. */
export async function currentSession(): Promise<{ sessionId: string; user: SessionUser } | null> {
  return sessionOfCookie((await cookies()).get(sessionCookieName())?.value);
}

/** The signed-in user, or null. */
export async function currentUser(): Promise<SessionUser | null> {
  return (await currentSession())?.user ?? null;
}

export async function requireUser(): Promise<SessionUser> {
  const user = await currentUser();
  if (!user) throw new AppError("NO_AUTHENTICATION_FOUND", "Sign in to continue.");
  return user;
}
