-- Faster ingestion and exact counts without visiting every match (the benchmark of issue 3).
--
-- 1. Attributes lose their serial id (one index and one sequence call per row less) and get
--    their position within the transaction (block) instead. The primary key becomes the index
--    of the attributes of a key in chain order, replacing the (network, height[, tx_index]) index.
-- 2. The number and time indexes become partial (most values are neither), and the number index
--    loses its trailing height: with it PostgreSQL 18 chose skip scans over every number in a
--    range to find a height range, far slower than reading the key in that height range.
-- 3. Per-key and per-value transaction counts, maintained by ingestion (lib/consensus/store.ts),
--    backfilled here from what is already stored.
-- 4. The text columns of the index compare bytewise (COLLATE "C"), whatever the cluster locale:
--    searches only test them for equality and substrings, and locale-aware comparisons made
--    every index insertion and lookup slower.
-- 5. Block bodies are stored uncompressed (STORAGE EXTERNAL): compressing them with pglz cost
--    more CPU at ingestion than the disk it saved is worth.

-- consensus_tx_attrs
ALTER TABLE "consensus_tx_attrs" ADD COLUMN "ord" INTEGER;
UPDATE "consensus_tx_attrs" a SET "ord" = o."ord"
  FROM (SELECT "id", (row_number() OVER (PARTITION BY "network", "height", "tx_index" ORDER BY "id") - 1)::int AS "ord" FROM "consensus_tx_attrs") o
  WHERE a."id" = o."id";
ALTER TABLE "consensus_tx_attrs" ALTER COLUMN "ord" SET NOT NULL;
DROP INDEX "consensus_tx_attrs_network_height_tx_index_idx";
ALTER TABLE "consensus_tx_attrs" DROP CONSTRAINT "consensus_tx_attrs_pkey",
DROP COLUMN "id",
ADD CONSTRAINT "consensus_tx_attrs_pkey" PRIMARY KEY ("network", "key", "height", "tx_index", "ord");
DROP INDEX "consensus_tx_attrs_network_key_num_height_tx_index_idx";
CREATE INDEX "consensus_tx_attrs_network_key_num_idx" ON "consensus_tx_attrs"("network", "key", "num") WHERE "num" IS NOT NULL;
DROP INDEX "consensus_tx_attrs_network_key_time_idx";
CREATE INDEX "consensus_tx_attrs_network_key_time_idx" ON "consensus_tx_attrs"("network", "key", "time") WHERE "time" IS NOT NULL;

-- consensus_block_attrs
ALTER TABLE "consensus_block_attrs" ADD COLUMN "ord" INTEGER;
UPDATE "consensus_block_attrs" a SET "ord" = o."ord"
  FROM (SELECT "id", (row_number() OVER (PARTITION BY "network", "height" ORDER BY "id") - 1)::int AS "ord" FROM "consensus_block_attrs") o
  WHERE a."id" = o."id";
ALTER TABLE "consensus_block_attrs" ALTER COLUMN "ord" SET NOT NULL;
DROP INDEX "consensus_block_attrs_network_height_idx";
ALTER TABLE "consensus_block_attrs" DROP CONSTRAINT "consensus_block_attrs_pkey",
DROP COLUMN "id",
ADD CONSTRAINT "consensus_block_attrs_pkey" PRIMARY KEY ("network", "key", "height", "ord");
DROP INDEX "consensus_block_attrs_network_key_num_height_idx";
CREATE INDEX "consensus_block_attrs_network_key_num_idx" ON "consensus_block_attrs"("network", "key", "num") WHERE "num" IS NOT NULL;
DROP INDEX "consensus_block_attrs_network_key_time_idx";
CREATE INDEX "consensus_block_attrs_network_key_time_idx" ON "consensus_block_attrs"("network", "key", "time") WHERE "time" IS NOT NULL;

-- CreateTable
CREATE TABLE "consensus_attr_keys" (
    "network" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "txs" BIGINT NOT NULL,
    "multi_txs" BIGINT NOT NULL,

    CONSTRAINT "consensus_attr_keys_pkey" PRIMARY KEY ("network","key")
);

-- CreateTable
CREATE TABLE "consensus_attr_values" (
    "network" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "num" DECIMAL(65,30),
    "time" TIMESTAMPTZ(6),
    "txs" BIGINT NOT NULL,

    CONSTRAINT "consensus_attr_values_pkey" PRIMARY KEY ("network","key","value")
);

INSERT INTO "consensus_attr_keys" ("network", "key", "txs", "multi_txs")
  SELECT "network", "key", count(*), count(*) FILTER (WHERE n > 1)
  FROM (SELECT "network", "key", count(DISTINCT "value") AS n FROM "consensus_tx_attrs" GROUP BY "network", "key", "height", "tx_index") per_tx
  GROUP BY "network", "key";

INSERT INTO "consensus_attr_values" ("network", "key", "value", "num", "time", "txs")
  SELECT "network", "key", "value", min("num"), min("time"), count(DISTINCT ("height", "tx_index"))
  FROM "consensus_tx_attrs" GROUP BY "network", "key", "value";

-- Bytewise text (see 4 above), then uncompressed block bodies (5).
ALTER TABLE "consensus_blocks" ALTER COLUMN "network" TYPE TEXT COLLATE "C", ALTER COLUMN "hash" TYPE TEXT COLLATE "C";
ALTER TABLE "consensus_txs" ALTER COLUMN "network" TYPE TEXT COLLATE "C", ALTER COLUMN "hash" TYPE TEXT COLLATE "C";
ALTER TABLE "consensus_tx_attrs" ALTER COLUMN "network" TYPE TEXT COLLATE "C", ALTER COLUMN "key" TYPE TEXT COLLATE "C", ALTER COLUMN "value" TYPE TEXT COLLATE "C";
ALTER TABLE "consensus_block_attrs" ALTER COLUMN "network" TYPE TEXT COLLATE "C", ALTER COLUMN "key" TYPE TEXT COLLATE "C", ALTER COLUMN "value" TYPE TEXT COLLATE "C";
ALTER TABLE "consensus_attr_keys" ALTER COLUMN "network" TYPE TEXT COLLATE "C", ALTER COLUMN "key" TYPE TEXT COLLATE "C";
ALTER TABLE "consensus_attr_values" ALTER COLUMN "network" TYPE TEXT COLLATE "C", ALTER COLUMN "key" TYPE TEXT COLLATE "C", ALTER COLUMN "value" TYPE TEXT COLLATE "C";
ALTER TABLE "consensus_blocks" ALTER COLUMN "body" SET STORAGE EXTERNAL;
