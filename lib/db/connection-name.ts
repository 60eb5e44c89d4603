// A leaf module (no imports): the outage probe and the listener name their connections with it, and
// Playwright's specs load those through lib/errors.ts without the Prisma client.

/**
 * Every connection this process opens says whose it is in pg_stat_activity: "blockgate <part>
 * (pid N)", at most 63 characters (PostgreSQL cuts longer names).
 */
export function connectionName(part: string): string {
  const pid = ` (pid ${process.pid})`;
  return `blockgate ${part}`.slice(0, 63 - pid.length) + pid;
}
