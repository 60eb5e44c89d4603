-- One EVM devnet per network in a cluster (issue 25): the worker holding the network's lock runs
-- it and registers where it listens, web processes read that, and its state is saved here so the
-- next holder resumes the chain. (No semicolons in these comments: the migration engine splits
-- the script at each one.)

-- CreateTable
CREATE TABLE "devnet_endpoints" (
    "network" TEXT NOT NULL,
    "url" TEXT,
    "holder" TEXT,
    "term" BIGINT NOT NULL DEFAULT 0,
    "wanted_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "devnet_endpoints_pkey" PRIMARY KEY ("network")
);

-- CreateTable
CREATE TABLE "devnet_states" (
    "network" TEXT NOT NULL,
    "state" BYTEA NOT NULL,
    "block_number" BIGINT NOT NULL,
    "saved_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "devnet_states_pkey" PRIMARY KEY ("network")
);
