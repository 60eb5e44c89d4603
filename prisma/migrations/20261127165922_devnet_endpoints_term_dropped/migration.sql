-- The devnet holder's writes are fenced by its leader lock's term (leader_terms) like every other
-- leader's, so devnet_endpoints no longer counts terms of its own. (No semicolons in these
-- comments: the migration engine splits the script at each one.)

-- AlterTable
ALTER TABLE "devnet_endpoints" DROP COLUMN "term";
