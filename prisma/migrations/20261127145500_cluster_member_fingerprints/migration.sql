-- A process refuses to join a cluster whose live members run another build or hold other secrets
-- (issue 25). Rows of processes from before this migration have neither: they count as another build.

-- AlterTable
ALTER TABLE "cluster_members" ADD COLUMN     "build" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "secrets" TEXT NOT NULL DEFAULT '';
