-- Usage of webhook messages gets its own column (issue 24): subscription_id names the subscription
-- whose messages were delivered, or queued from the console, and key_id is then empty. Until now
-- key_id held the subscription's id for those: the rows of earlier usage move over below, so
-- reports read every period alike. (No semicolons in these comments: the migration engine splits
-- the script at each one.)

-- AlterTable
ALTER TABLE "usage_buckets" DROP CONSTRAINT "usage_buckets_pkey",
ADD COLUMN     "subscription_id" TEXT NOT NULL DEFAULT '',
ADD CONSTRAINT "usage_buckets_pkey" PRIMARY KEY ("project_id", "minute", "key_id", "subscription_id", "network", "api", "endpoint", "status");

-- AlterTable
ALTER TABLE "usage_days" DROP CONSTRAINT "usage_days_pkey",
ADD COLUMN     "subscription_id" TEXT NOT NULL DEFAULT '',
ADD CONSTRAINT "usage_days_pkey" PRIMARY KEY ("project_id", "day", "key_id", "subscription_id", "network", "api", "endpoint", "status");

-- AlterTable
ALTER TABLE "usage_hours" DROP CONSTRAINT "usage_hours_pkey",
ADD COLUMN     "subscription_id" TEXT NOT NULL DEFAULT '',
ADD CONSTRAINT "usage_hours_pkey" PRIMARY KEY ("project_id", "hour", "key_id", "subscription_id", "network", "api", "endpoint", "status");

-- Earlier usage of webhook messages: key_id held the subscription id (wh_…, never an API key's key_…).
UPDATE "usage_buckets" SET "subscription_id" = "key_id", "key_id" = '' WHERE "key_id" LIKE 'wh\_%';
UPDATE "usage_hours" SET "subscription_id" = "key_id", "key_id" = '' WHERE "key_id" LIKE 'wh\_%';
UPDATE "usage_days" SET "subscription_id" = "key_id", "key_id" = '' WHERE "key_id" LIKE 'wh\_%';
