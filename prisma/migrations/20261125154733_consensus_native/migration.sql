-- AlterTable
ALTER TABLE "consensus_blocks" ADD COLUMN     "native" JSON,
ADD COLUMN     "results" JSON;

-- AlterTable
ALTER TABLE "consensus_txs" ADD COLUMN     "exec_result" JSON;
