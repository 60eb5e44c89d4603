import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import GitHubProvider from "next-auth/providers/github";
import { clientIp } from "@/lib/client-ip";
import { getEnv } from "@/lib/env";
import { databaseUnavailable } from "@/lib/errors";
import { signInSchema } from "./schema";
import { SignInError, upsertGithubUser, verifyCredentials } from "./users";

function providers(): NextAuthOptions["providers"] {
  const list: NextAuthOptions["providers"] = [
    CredentialsProvider({
      id: "credentials",
      name: "Email and password",
      credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
      async authorize(credentials, req) {
        const parsed = signInSchema.safeParse(credentials ?? {});
        if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? "Enter your email and password.");
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

const g = globalThis as unknown as { __blockgateAuthOptions?: NextAuthOptions };

/** next-auth configuration: JWT sessions in an httpOnly cookie (Secure when PUBLIC_URL is https). */
export function authOptions(): NextAuthOptions {
  g.__blockgateAuthOptions ??= {
    secret: getEnv().NEXTAUTH_SECRET,
    session: { strategy: "jwt", maxAge: 30 * 24 * 60 * 60 },
    // next-auth decides from NEXTAUTH_URL, which an operator may set apart from PUBLIC_URL.
    useSecureCookies: getEnv().PUBLIC_URL.startsWith("https://"),
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
      jwt({ token, user }) {
        if (user) token.uid = user.id;
        return token;
      },
      session({ session, token }) {
        if (session.user && typeof token.uid === "string") session.user.id = token.uid;
        return session;
      },
    },
  };
  return g.__blockgateAuthOptions;
}
