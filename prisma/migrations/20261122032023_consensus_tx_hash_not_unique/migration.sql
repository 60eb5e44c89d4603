-- DropIndex
DROP INDEX "consensus_txs_network_hash_key";

-- CreateIndex
CREATE INDEX "consensus_txs_network_hash_idx" ON "consensus_txs"("network", "hash");
