-- Webhook followers read only what changed in a network's subscriptions since their last read,
-- in O(1) when nothing did, so that a network can have 1,000,000 of them (issue 25).
--
-- change_xid is the transaction that last changed what a follower matches on (pg_current_xact_id),
-- set by triggers on every insert and on every update of those columns, whoever writes: the API,
-- the console, the delivery worker turning a subscription off, a follower giving it its start
-- block. A deleted subscription leaves its id in webhook_subscription_deletions, also when a
-- project's deletion takes it. A follower remembers the snapshot of its last read and then reads
-- the rows of transactions that snapshot did not see (pg_visible_in_snapshot): a transaction's
-- number is taken before it commits, so it is the snapshot, not a high-water mark, that tells
-- which changes were seen. The follower leading the network removes the deletions every later
-- read will have seen.
--
-- webhook_subscriptions_unstarted_idx is partial (start_block null, active): the subscriptions a
-- follower gives a start block at every poll, a few among many.

-- AlterTable
ALTER TABLE "webhook_subscriptions" ADD COLUMN     "change_xid" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "webhook_subscription_deletions" (
    "id" TEXT NOT NULL,
    "network" TEXT NOT NULL,
    "change_xid" BIGINT NOT NULL,

    CONSTRAINT "webhook_subscription_deletions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "webhook_subscriptions_network_change_xid_idx" ON "webhook_subscriptions"("network", "change_xid");

-- CreateIndex
CREATE INDEX "webhook_subscriptions_unstarted_idx" ON "webhook_subscriptions"("network") WHERE "start_block" IS NULL AND "is_active";

-- CreateIndex
CREATE INDEX "webhook_subscription_deletions_network_change_xid_idx" ON "webhook_subscription_deletions"("network", "change_xid");

-- CreateFunction
CREATE FUNCTION webhook_subscription_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.change_xid := pg_current_xact_id()::text::bigint;
  RETURN NEW;
END
$$;

CREATE FUNCTION webhook_subscription_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_subscription_deletions (id, network, change_xid) VALUES (OLD.id, OLD.network, pg_current_xact_id()::text::bigint);
  RETURN NULL;
END
$$;

-- CreateTrigger
CREATE TRIGGER webhook_subscription_inserted BEFORE INSERT ON webhook_subscriptions
  FOR EACH ROW EXECUTE FUNCTION webhook_subscription_changed();

CREATE TRIGGER webhook_subscription_changed BEFORE UPDATE ON webhook_subscriptions
  FOR EACH ROW WHEN ((OLD.is_active, OLD.start_block, OLD.condition, OLD.period, OLD.event_type, OLD.is_instant)
    IS DISTINCT FROM (NEW.is_active, NEW.start_block, NEW.condition, NEW.period, NEW.event_type, NEW.is_instant))
  EXECUTE FUNCTION webhook_subscription_changed();

CREATE TRIGGER webhook_subscription_deleted AFTER DELETE ON webhook_subscriptions
  FOR EACH ROW EXECUTE FUNCTION webhook_subscription_deleted();
