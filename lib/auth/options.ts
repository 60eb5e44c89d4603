import type { NextAuthOptions, Session } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import GitHubProvider from "next-auth/providers/github";
import { clientIp } from "@/lib/client-ip";
import { getEnv } from "@/lib/env";
import { databaseUnavailable } from "@/lib/errors";
import { perProcess } from "@/lib/per-process";
import { inputError, MESSAGE_ONLY } from "@/lib/validation";
import { signInSchema } from "./schema";
import { activeSession, endSession, SESSION_MAX_AGE_S, sessionCookieName, sessionIdOf, startSession } from "./session";
import { SignInError, upsertGithubUser, verifyCredentials } from "./users";

function providers(): NextAuthOptions["providers"] {
  const list: NextAuthOptions["providers"] = [
    CredentialsProvider({
      id: "credentials",
      name: "Email and password",
      credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
      async authorize(credentials, req) {
        const parsed = signInSchema.safeParse(credentials ?? {});
        if (!parsed.success) throw new Error(inputError(parsed.error, credentials, MESSAGE_ONLY).message);
        try {
          return await verifyCredentials(parsed.data.email, parsed.data.password, clientIp(new Headers(req.headers)));
        } catch (e) {
          // next-auth passes the message to the form as `error` (the route answers 503 for an unreachable database).
          if (e instanceof SignInError) throw new Error(e.message);
          const unavailable = databaseUnavailable(e);
          throw unavailable ? new Error(unavailable.message) : e;
        }
      },
    }),
  ];
  const { GITHUB_ID, GITHUB_SECRET } = getEnv();
  if (GITHUB_ID && GITHUB_SECRET) list.push(GitHubProvider({ clientId: GITHUB_ID, clientSecret: GITHUB_SECRET }));
  return list;
}

export function githubEnabled(): boolean {
  const { GITHUB_ID, GITHUB_SECRET } = getEnv();
  return Boolean(GITHUB_ID && GITHUB_SECRET);
}

// Per process (lib/per-process.ts): built once, from the configuration, whichever bundle asks first.
const built = perProcess("auth-options", (): { options?: NextAuthOptions } => ({}));

/**
 * next-auth configuration: a JWT in an httpOnly cookie (Secure when PUBLIC_URL is https) that names
 * a stored session (see session.ts), started at sign-in and ended at sign-out.
 */
export function authOptions(): NextAuthOptions {
  const secure = getEnv().PUBLIC_URL.startsWith("https://");
  built.options ??= {
    secret: getEnv().NEXTAUTH_SECRET,
    session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_S },
    // next-auth decides from NEXTAUTH_URL, which an operator may set apart from PUBLIC_URL.
    useSecureCookies: secure,
    // next-auth's defaults, named here because session.ts reads the cookie itself.
    cookies: { sessionToken: { name: sessionCookieName(), options: { httpOnly: true, sameSite: "lax", path: "/", secure } } },
    pages: { signIn: "/sign-in", error: "/sign-in" },
    providers: providers(),
    callbacks: {
      async signIn({ account, user, profile }) {
        if (account?.provider !== "github") return true;
        if (!user.email) return "/sign-in?error=GitHubEmail";
        const local = await upsertGithubUser(String(account.providerAccountId), user.email, profile?.name ?? user.name ?? null);
        user.id = local.id;
        return true;
      },
      async jwt({ token, user }) {
        // `user` is there only at sign-in (email and password, or GitHub).
        if (user) token.sid = await startSession(user.id);
        return token;
      },
      // GET /api/auth/session: an ended session answers as signed out ({}), like no cookie.
      async session({ session, token }) {
        const sessionId = sessionIdOf(token);
        let user;
        try {
          user = sessionId === null ? null : await activeSession(sessionId);
        } catch (e) {
          // next-auth clears the cookie when this throws: an unreachable database must not sign anyone out.
          if (databaseUnavailable(e)) return session;
          throw e;
        }
        if (!user) return {} as Session;
        session.user = { ...session.user, id: user.id, email: user.email, name: user.name };
        return session;
      },
    },
    events: {
      async signOut({ token }) {
        const sessionId = sessionIdOf(token);
        if (sessionId !== null) await endSession(sessionId);
      },
    },
  };
  return built.options;
}
