-- Fair claims of webhook messages (issue 23). (No semicolons in these comments: the migration
-- engine splits the script at each one.)
--
-- The claim no longer takes the oldest due messages of all subscriptions (behind the backlog of
-- one subscription, a fresh message of another waited for the whole backlog). It walks the
-- subscriptions that have messages never attempted, round robin, over an index of those by
-- subscription and due time, and takes due retries oldest first from an index of retries by due
-- time (which replaces the index of every message by due time). Both partial: done messages
-- (nearly all rows) are in neither. The walk reads only messages never attempted: with retries
-- in its index (due in minutes or hours) it would visit every failing subscription at every claim.

-- DropIndex
DROP INDEX "webhook_messages_next_attempt_at_idx";

-- CreateIndex
CREATE INDEX "webhook_messages_subscription_id_next_attempt_at_idx" ON "webhook_messages"("subscription_id", "next_attempt_at") WHERE "status" = 'PENDING' AND "attempts" = 0;

-- CreateIndex
CREATE INDEX "webhook_messages_next_attempt_at_idx" ON "webhook_messages"("next_attempt_at") WHERE "status" = 'PENDING' AND "attempts" > 0;
