import type { Instrumentation } from "next";

/**
 * Errors of console pages and routes as Next.js captures them: one that says the database is
 * unreachable starts the process's outage state (one log line, a probe), after which the HTTP
 * layer answers console requests 503 with Retry-After until the database answers again.
 */
export const onRequestError: Instrumentation.onRequestError = async (error) => {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { isDatabaseUnreachable, reportDatabaseUnreachable } = await import("@/lib/db/outage");
  if (isDatabaseUnreachable(error)) reportDatabaseUnreachable(error);
};
