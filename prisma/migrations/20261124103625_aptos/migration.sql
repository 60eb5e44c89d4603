-- CreateTable
CREATE TABLE "aptos_blocks" (
    "network" TEXT NOT NULL,
    "height" BIGINT NOT NULL,
    "hash" TEXT NOT NULL,
    "first_version" BIGINT NOT NULL,
    "last_version" BIGINT NOT NULL,
    "timestamp" BIGINT NOT NULL,
    "epoch" BIGINT NOT NULL,
    "tx_hashes" TEXT[],

    CONSTRAINT "aptos_blocks_pkey" PRIMARY KEY ("network","height")
);

-- CreateTable
CREATE TABLE "aptos_transactions" (
    "network" TEXT NOT NULL,
    "version" BIGINT NOT NULL,
    "block_height" BIGINT NOT NULL,
    "hash" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "sender" TEXT,
    "sequence_number" BIGINT,
    "payload_function" TEXT,
    "success" BOOLEAN NOT NULL,
    "body" JSON NOT NULL,

    CONSTRAINT "aptos_transactions_pkey" PRIMARY KEY ("network","version")
);

-- CreateTable
CREATE TABLE "aptos_events" (
    "network" TEXT NOT NULL,
    "version" BIGINT NOT NULL,
    "event_index" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "account_address" TEXT NOT NULL,
    "creation_number" DECIMAL(20,0) NOT NULL,
    "sequence_number" DECIMAL(20,0) NOT NULL,
    "data" JSON NOT NULL,

    CONSTRAINT "aptos_events_pkey" PRIMARY KEY ("network","version","event_index")
);

-- CreateIndex
CREATE UNIQUE INDEX "aptos_blocks_network_last_version_key" ON "aptos_blocks"("network", "last_version");

-- CreateIndex
CREATE INDEX "aptos_transactions_network_hash_idx" ON "aptos_transactions"("network", "hash");

-- CreateIndex
CREATE INDEX "aptos_transactions_network_payload_function_version_idx" ON "aptos_transactions"("network", "payload_function", "version");

-- CreateIndex
CREATE INDEX "aptos_transactions_network_sender_sequence_number_idx" ON "aptos_transactions"("network", "sender", "sequence_number");

-- CreateIndex
CREATE INDEX "aptos_events_network_type_account_address_version_idx" ON "aptos_events"("network", "type", "account_address", "version");
