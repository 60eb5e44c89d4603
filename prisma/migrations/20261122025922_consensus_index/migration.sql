-- CreateTable
CREATE TABLE "consensus_blocks" (
    "network" TEXT NOT NULL,
    "height" BIGINT NOT NULL,
    "hash" TEXT NOT NULL,
    "time" TIMESTAMPTZ(6) NOT NULL,
    "num_txs" INTEGER NOT NULL,
    "body" JSON NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "consensus_blocks_pkey" PRIMARY KEY ("network","height")
);

-- CreateTable
CREATE TABLE "consensus_txs" (
    "network" TEXT NOT NULL,
    "height" BIGINT NOT NULL,
    "tx_index" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "raw" BYTEA NOT NULL,
    "result" JSON NOT NULL,

    CONSTRAINT "consensus_txs_pkey" PRIMARY KEY ("network","height","tx_index")
);

-- CreateTable
CREATE TABLE "consensus_tx_attrs" (
    "id" BIGSERIAL NOT NULL,
    "network" TEXT NOT NULL,
    "height" BIGINT NOT NULL,
    "tx_index" INTEGER NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "num" DECIMAL(65,30),
    "time" TIMESTAMPTZ(6),

    CONSTRAINT "consensus_tx_attrs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "consensus_block_attrs" (
    "id" BIGSERIAL NOT NULL,
    "network" TEXT NOT NULL,
    "height" BIGINT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "num" DECIMAL(65,30),
    "time" TIMESTAMPTZ(6),

    CONSTRAINT "consensus_block_attrs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "consensus_blocks_network_hash_idx" ON "consensus_blocks"("network", "hash");

-- CreateIndex
CREATE INDEX "consensus_blocks_network_time_idx" ON "consensus_blocks"("network", "time");

-- CreateIndex
CREATE UNIQUE INDEX "consensus_txs_network_hash_key" ON "consensus_txs"("network", "hash");

-- CreateIndex
CREATE INDEX "consensus_tx_attrs_network_key_value_height_tx_index_idx" ON "consensus_tx_attrs"("network", "key", "value", "height", "tx_index");

-- CreateIndex
CREATE INDEX "consensus_tx_attrs_network_key_num_height_tx_index_idx" ON "consensus_tx_attrs"("network", "key", "num", "height", "tx_index");

-- CreateIndex
CREATE INDEX "consensus_tx_attrs_network_key_time_idx" ON "consensus_tx_attrs"("network", "key", "time");

-- CreateIndex
CREATE INDEX "consensus_tx_attrs_network_height_tx_index_idx" ON "consensus_tx_attrs"("network", "height", "tx_index");

-- CreateIndex
CREATE INDEX "consensus_block_attrs_network_key_value_height_idx" ON "consensus_block_attrs"("network", "key", "value", "height");

-- CreateIndex
CREATE INDEX "consensus_block_attrs_network_key_num_height_idx" ON "consensus_block_attrs"("network", "key", "num", "height");

-- CreateIndex
CREATE INDEX "consensus_block_attrs_network_key_time_idx" ON "consensus_block_attrs"("network", "key", "time");

-- CreateIndex
CREATE INDEX "consensus_block_attrs_network_height_idx" ON "consensus_block_attrs"("network", "height");
