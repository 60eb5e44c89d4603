-- WEBHOOK_DELIVERY_PER_HOST bounds the deliveries in flight to a receiver host in the whole
-- cluster, not per process (issue 25). (No semicolons in these comments: the migration engine
-- splits the script at each one.)
--
-- A claimed message's next_attempt_at is its lease's end, as a retry's is its due time: the two
-- could not be told apart. A lease now also says its end, its holder (one delivery worker) and the
-- receiver it counts against, so a claim can count the live leases other workers hold on a
-- receiver. Holders clear them when they record the attempt or hand the message back, and a holder
-- that died leaves them to end by themselves. The partial index holds only rows with a lease.
--
-- webhook_receiver_leases counts them for the claim (lib/webhooks/delivery/store.ts claimSql). It
-- is VOLATILE so that its query reads with a snapshot of its own, taken when it is called: the
-- claim calls it for a receiver once it holds the receiver's advisory lock, and sees the leases of
-- every claim of that receiver that committed before, which its own snapshot (taken as the claim
-- began) may miss. Plain SQL in one query, never inlined into the claim.

-- AlterTable
ALTER TABLE "webhook_messages" ADD COLUMN     "leased_by" TEXT,
ADD COLUMN     "leased_until" TIMESTAMPTZ(3),
ADD COLUMN     "receiver" TEXT;

-- CreateIndex
CREATE INDEX "webhook_messages_receiver_idx" ON "webhook_messages"("receiver") WHERE "leased_until" IS NOT NULL;

-- CreateFunction
CREATE FUNCTION webhook_receiver_leases(receiver text, holder text) RETURNS integer
  LANGUAGE sql VOLATILE PARALLEL UNSAFE
  AS $$ SELECT count(*)::int FROM webhook_messages m WHERE m.receiver = $1 AND m.leased_until > now() AND m.leased_by <> $2 $$;
