-- The W3C traceparent of the span that queued a message, when tracing is on (lib/tracing.ts): the
-- spans of its delivery attempts link to it. Null for messages queued with tracing off.

-- AlterTable
ALTER TABLE "webhook_messages" ADD COLUMN     "trace_parent" TEXT;
