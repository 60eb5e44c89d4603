-- Leader terms (issue 25): every new holder of a leader lock raises the term of its lock, and the
-- writes of the leader check theirs is current, so a leader that lost its lock while stopped writes
-- nothing when it wakes. (No semicolons in these comments: the migration engine splits the script
-- at each one.)

-- CreateTable
CREATE TABLE "leader_terms" (
    "name" TEXT NOT NULL,
    "term" BIGINT NOT NULL,

    CONSTRAINT "leader_terms_pkey" PRIMARY KEY ("name")
);
