-- A dead delivery worker's leases no longer hold its receivers for their whole length (issue 25).
-- (No semicolons in these comments: the migration engine splits the script at each one.)
--
-- A worker running in a cluster member names the member in its leases' holder, as
-- <member id>/<worker> (lib/webhooks/delivery/store.ts leaseHolder). Such a lease counts against
-- its receiver only while the member's row says it is live: a heartbeat at most live_ms old (the
-- claim passes lib/cluster/members.ts MEMBER_LIVE_MS), so a killed worker blocks its receivers
-- for that long at most, and a frozen one stops counting too (its worker starts nothing of what
-- it held once it wakes: lib/webhooks/delivery/worker.ts). A holder without a slash belongs to no
-- member (tests, benchmarks): its leases count until they end, as before.
--
-- The function takes one more argument, hence dropped and created again. Still VOLATILE, for the
-- snapshot of its own (see 20261127165856_webhook_receiver_leases).

DROP FUNCTION webhook_receiver_leases(text, text);

CREATE FUNCTION webhook_receiver_leases(receiver text, holder text, live_ms integer) RETURNS integer
  LANGUAGE sql VOLATILE PARALLEL UNSAFE
  AS $$ SELECT count(*)::int FROM webhook_messages m
    WHERE m.receiver = $1 AND m.leased_until > now() AND m.leased_by <> $2
      AND (strpos(m.leased_by, '/') = 0 OR EXISTS (SELECT 1 FROM cluster_members c
        WHERE c.id = split_part(m.leased_by, '/', 1) AND c.heartbeat_at >= now() - $3 * interval '1 millisecond')) $$;
