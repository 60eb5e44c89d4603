-- CreateTable
CREATE TABLE "usage_flushes" (
    "id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(0) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "usage_flushes_pkey" PRIMARY KEY ("id")
);
