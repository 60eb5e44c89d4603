-- CreateTable
CREATE TABLE "request_logs" (
    "id" BIGSERIAL NOT NULL,
    "project_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "request_id" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "api" TEXT NOT NULL,
    "network" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "calls" INTEGER NOT NULL DEFAULT 1,
    "status" INTEGER NOT NULL,
    "status_class" TEXT NOT NULL,
    "latency_ms" REAL NOT NULL,
    "cu" INTEGER NOT NULL,
    "path" TEXT NOT NULL,
    "params" TEXT NOT NULL,
    "result" TEXT NOT NULL,

    CONSTRAINT "request_logs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "request_logs_project_id_id_idx" ON "request_logs"("project_id", "id");
