-- Webhook queues bounded by plan, and what queued messages cost (issue 23). (No semicolons in
-- these comments: the migration engine splits the script at each one.)
--
-- 1. prepaid: messages a user asks for (test, resend, replay) are charged as they are queued, and
--    their delivery is not charged again. Messages of the chain stay charged on first delivery.
-- 2. The pending messages of a subscription are counted (its bound) over the index of messages
--    never attempted (20261127104638_webhook_fair_claims) and this one of retries by subscription,
--    those of a project over the other. Both partial: done messages are in neither. (No index of
--    every pending message by subscription: the walk of the claim would read through retries in it.)

-- AlterTable
ALTER TABLE "webhook_messages" ADD COLUMN     "prepaid" BOOLEAN NOT NULL DEFAULT false;

-- CreateIndex
CREATE INDEX "webhook_messages_subscription_id_idx" ON "webhook_messages"("subscription_id") WHERE "status" = 'PENDING' AND "attempts" > 0;

-- CreateIndex
CREATE INDEX "webhook_messages_project_id_idx" ON "webhook_messages"("project_id") WHERE "status" = 'PENDING';
