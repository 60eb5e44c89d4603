"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect } from "react";
import { api } from "@/components/api-client";
import { formatDateTime, formatNumber } from "@/components/ui/format";
import { usagePath, type UsageReport } from "@/components/usage/usage-data";

type Allowance = UsageReport["allowance"];

/** Share of the allowance from which the console warns. */
const WARN_AT = 0.8;

/** How often an open project page re-reads the allowance (only while the page is visible). */
const REFRESH_MS = 10_000;

/** The cache entry of a project's allowance; the Usage page writes its own fresher reads into it. */
export const allowanceQueryKey = (projectId: string) => ["allowance", projectId] as const;

/**
 * The allowance banner, kept live: seeded with the server's reading, then re-read from the usage
 * API (its `allowance`, with a one-minute range) every 10 s while the page is visible, so it
 * appears, grows and switches to the 100 % wording without a reload. Nothing below 80 %.
 */
export function LiveAllowanceBanner({ projectId, initial }: { projectId: string; initial: Allowance }) {
  const queryClient = useQueryClient();
  const query = useQuery({
    queryKey: allowanceQueryKey(projectId),
    queryFn: ({ signal }) => {
      const now = Date.now();
      return api<UsageReport>(usagePath(projectId, { from: now - 60_000, to: now, step: "1m", groupBy: "endpoint" }), { signal }).then((r) => r.allowance);
    },
    initialData: initial,
    // The server's reading is fresh: the first re-read comes with the interval, not at mount.
    staleTime: REFRESH_MS,
    refetchInterval: REFRESH_MS,
    refetchIntervalInBackground: false,
  });
  // A new server rendering (a plan or overage change refreshes the page) is the newest reading.
  useEffect(() => {
    queryClient.setQueryData(allowanceQueryKey(projectId), initial);
  }, [queryClient, projectId, initial]);

  const allowance = query.data;
  if (allowance.allowanceCu === null || allowance.usedCu < allowance.allowanceCu * WARN_AT) return null;
  const used = allowance.usedCu >= allowance.allowanceCu;
  const percent = Math.floor((allowance.usedCu / allowance.allowanceCu) * 100);
  const period = allowance.period === "day" ? "today's" : "this month's";
  return (
    <section
      aria-label="Plan allowance"
      data-testid="allowance-banner"
      className={
        used && !allowance.overage
          ? "border-b border-danger/30 bg-danger-soft px-4 py-3 text-sm text-danger-text sm:px-6 lg:px-10"
          : "border-b border-warn-text/25 bg-warn-soft px-4 py-3 text-sm text-warn-text sm:px-6 lg:px-10"
      }
    >
      <p>
        <strong className="font-semibold">
          {used
            ? allowance.overage && percent > 100
              ? `This project used ${percent} % of ${period} allowance`
              : `This project used all of ${period} allowance`
            : `This project used ${percent} % of ${period} allowance`}
        </strong>{" "}
        ({formatNumber(allowance.usedCu)} of {formatNumber(allowance.allowanceCu)} CU on the {allowance.label} plan).{" "}
        {used
          ? allowance.overage
            ? "Overage is on: calls past the allowance are still served, and metered as overage."
            : "Calls are refused with 429 EXCEEDED_QUOTA_LIMIT until it resets."
          : allowance.overage
            ? "Overage is on: at 100 % calls are still served, and what passes the allowance is metered as overage."
            : "At 100 % calls are refused with 429 EXCEEDED_QUOTA_LIMIT."}{" "}
        It resets at {formatDateTime(allowance.resetsAt)}.{" "}
        <Link href={`/projects/${projectId}/plan`} className="font-medium underline underline-offset-2">
          See plans
        </Link>
      </p>
    </section>
  );
}
