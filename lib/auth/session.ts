import { getServerSession } from "next-auth";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { authOptions } from "./options";
import type { SessionUser } from "./users";

/** The signed-in user, or null. A session whose user no longer exists counts as signed out. */
export async function currentUser(): Promise<SessionUser | null> {
  const session = await getServerSession(authOptions());
  const id = session?.user?.id;
  if (!id) return null;
  return db().user.findUnique({ where: { id }, select: { id: true, email: true, name: true } });
}

export async function requireUser(): Promise<SessionUser> {
  const user = await currentUser();
  if (!user) throw new AppError("NO_AUTHENTICATION_FOUND", "Sign in to continue.");
  return user;
}
