-- CreateTable
CREATE TABLE "worker_cursors" (
    "kind" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" JSONB NOT NULL,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "worker_cursors_pkey" PRIMARY KEY ("kind","key")
);
