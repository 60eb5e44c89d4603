-- AlterTable
ALTER TABLE "usage_buckets" DROP CONSTRAINT "usage_buckets_pkey",
ADD COLUMN     "api" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "latency_hist" INTEGER[] DEFAULT ARRAY[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]::INTEGER[],
ADD COLUMN     "latency_ms_sum" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "status" TEXT NOT NULL DEFAULT '2xx',
ADD CONSTRAINT "usage_buckets_pkey" PRIMARY KEY ("project_id", "minute", "key_id", "network", "api", "endpoint", "status");

-- CreateTable
CREATE TABLE "usage_hours" (
    "project_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "network" TEXT NOT NULL,
    "api" TEXT NOT NULL DEFAULT '',
    "endpoint" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT '2xx',
    "hour" TIMESTAMPTZ(0) NOT NULL,
    "cu" BIGINT NOT NULL DEFAULT 0,
    "requests" INTEGER NOT NULL DEFAULT 0,
    "errors" INTEGER NOT NULL DEFAULT 0,
    "latency_ms_sum" BIGINT NOT NULL DEFAULT 0,
    "latency_hist" INTEGER[] DEFAULT ARRAY[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]::INTEGER[],

    CONSTRAINT "usage_hours_pkey" PRIMARY KEY ("project_id","hour","key_id","network","api","endpoint","status")
);

-- CreateTable
CREATE TABLE "usage_days" (
    "project_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "network" TEXT NOT NULL,
    "api" TEXT NOT NULL DEFAULT '',
    "endpoint" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT '2xx',
    "day" TIMESTAMPTZ(0) NOT NULL,
    "cu" BIGINT NOT NULL DEFAULT 0,
    "requests" BIGINT NOT NULL DEFAULT 0,
    "errors" BIGINT NOT NULL DEFAULT 0,
    "latency_ms_sum" BIGINT NOT NULL DEFAULT 0,
    "latency_hist" INTEGER[] DEFAULT ARRAY[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]::INTEGER[],

    CONSTRAINT "usage_days_pkey" PRIMARY KEY ("project_id","day","key_id","network","api","endpoint","status")
);

-- Usage recorded before this migration: its rollups (the interface, status class and latency of
-- those calls were not recorded: api stays '', latency histograms stay zero).
INSERT INTO "usage_hours" ("project_id", "key_id", "network", "api", "endpoint", "status", "hour", "cu", "requests", "errors")
SELECT "project_id", "key_id", "network", "api", "endpoint", "status", date_trunc('hour', "minute", 'UTC'), sum("cu"), sum("requests"), sum("errors")
FROM "usage_buckets" GROUP BY 1, 2, 3, 4, 5, 6, 7;

INSERT INTO "usage_days" ("project_id", "key_id", "network", "api", "endpoint", "status", "day", "cu", "requests", "errors")
SELECT "project_id", "key_id", "network", "api", "endpoint", "status", date_trunc('day', "minute", 'UTC'), sum("cu"), sum("requests"), sum("errors")
FROM "usage_buckets" GROUP BY 1, 2, 3, 4, 5, 6, 7;
