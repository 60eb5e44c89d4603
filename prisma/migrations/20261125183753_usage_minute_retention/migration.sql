-- CreateIndex
CREATE INDEX "usage_buckets_minute_idx" ON "usage_buckets" USING BRIN ("minute");
