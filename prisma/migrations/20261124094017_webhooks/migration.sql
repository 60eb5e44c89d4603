-- CreateEnum
CREATE TYPE "WebhookEventType" AS ENUM ('TRANSACTION', 'LOG', 'BLOCK_PERIOD');

-- CreateEnum
CREATE TYPE "WebhookMessageStatus" AS ENUM ('PENDING', 'SUCCESS', 'FAIL');

-- CreateTable
CREATE TABLE "webhook_subscriptions" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "network" TEXT NOT NULL,
    "event_type" "WebhookEventType" NOT NULL,
    "description" TEXT NOT NULL,
    "webhook_url" TEXT NOT NULL,
    "is_instant" BOOLEAN NOT NULL DEFAULT false,
    "is_active" BOOLEAN NOT NULL DEFAULT true,
    "condition" JSONB NOT NULL,
    "log_address" TEXT,
    "log_topic0" TEXT,
    "period" INTEGER,
    "start_block" BIGINT,
    "signing_key" TEXT NOT NULL,
    "sequence" BIGINT NOT NULL DEFAULT 0,
    "deactivated_reason" TEXT,
    "deactivated_at" TIMESTAMPTZ(3),
    "failing_since" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "webhook_subscriptions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_messages" (
    "id" TEXT NOT NULL,
    "subscription_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "sequence_number" BIGINT NOT NULL,
    "block_number" BIGINT,
    "block_hash" TEXT,
    "payload" JSON NOT NULL,
    "replayed" BOOLEAN NOT NULL DEFAULT false,
    "test" BOOLEAN NOT NULL DEFAULT false,
    "status" "WebhookMessageStatus" NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_attempts" (
    "id" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "subscription_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "http_status" INTEGER,
    "success" BOOLEAN NOT NULL,
    "error" TEXT,
    "response_body" TEXT,
    "request_headers" JSONB,

    CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_chain_blocks" (
    "network" TEXT NOT NULL,
    "number" BIGINT NOT NULL,
    "hash" TEXT NOT NULL,
    "parent_hash" TEXT NOT NULL,
    "time" TIMESTAMPTZ(0) NOT NULL,

    CONSTRAINT "webhook_chain_blocks_pkey" PRIMARY KEY ("network","number")
);

-- CreateTable
CREATE TABLE "webhook_inboxes" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "token_start" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "webhook_inboxes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_inbox_requests" (
    "id" TEXT NOT NULL,
    "inbox_id" TEXT NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "method" TEXT NOT NULL,
    "headers" JSONB NOT NULL,
    "body" TEXT NOT NULL,
    "signature_valid" BOOLEAN,

    CONSTRAINT "webhook_inbox_requests_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "webhook_subscriptions_project_id_network_created_at_idx" ON "webhook_subscriptions"("project_id", "network", "created_at");

-- CreateIndex
CREATE INDEX "webhook_subscriptions_network_event_type_is_active_idx" ON "webhook_subscriptions"("network", "event_type", "is_active");

-- CreateIndex
CREATE INDEX "webhook_subscriptions_network_log_address_log_topic0_idx" ON "webhook_subscriptions"("network", "log_address", "log_topic0");

-- CreateIndex
CREATE INDEX "webhook_messages_next_attempt_at_idx" ON "webhook_messages"("next_attempt_at");

-- CreateIndex
CREATE INDEX "webhook_messages_subscription_id_block_number_idx" ON "webhook_messages"("subscription_id", "block_number");

-- CreateIndex
CREATE INDEX "webhook_messages_created_at_idx" ON "webhook_messages"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_messages_subscription_id_sequence_number_key" ON "webhook_messages"("subscription_id", "sequence_number");

-- CreateIndex
CREATE INDEX "webhook_attempts_subscription_id_started_at_idx" ON "webhook_attempts"("subscription_id", "started_at");

-- CreateIndex
CREATE INDEX "webhook_attempts_project_id_started_at_idx" ON "webhook_attempts"("project_id", "started_at");

-- CreateIndex
CREATE INDEX "webhook_attempts_started_at_idx" ON "webhook_attempts"("started_at");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_inboxes_token_hash_key" ON "webhook_inboxes"("token_hash");

-- CreateIndex
CREATE INDEX "webhook_inboxes_project_id_idx" ON "webhook_inboxes"("project_id");

-- CreateIndex
CREATE INDEX "webhook_inbox_requests_inbox_id_received_at_idx" ON "webhook_inbox_requests"("inbox_id", "received_at");

-- AddForeignKey
ALTER TABLE "webhook_subscriptions" ADD CONSTRAINT "webhook_subscriptions_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_messages" ADD CONSTRAINT "webhook_messages_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "webhook_subscriptions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "webhook_messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_inboxes" ADD CONSTRAINT "webhook_inboxes_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_inbox_requests" ADD CONSTRAINT "webhook_inbox_requests_inbox_id_fkey" FOREIGN KEY ("inbox_id") REFERENCES "webhook_inboxes"("id") ON DELETE CASCADE ON UPDATE CASCADE;
