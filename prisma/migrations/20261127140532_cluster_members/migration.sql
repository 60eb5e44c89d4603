-- The processes of a deployment (issue 25): each web and worker process registers here and
-- renews its heartbeat from the database clock, so a process knows how many web processes share
-- a limit while Redis is away. (No semicolons in these comments: the migration engine splits the
-- script at each one.)

-- CreateTable
CREATE TABLE "cluster_members" (
    "id" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,
    "version" TEXT NOT NULL,
    "started_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "heartbeat_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "cluster_members_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "cluster_members_heartbeat_at_idx" ON "cluster_members"("heartbeat_at");
