-- AlterTable: a test inbox keeps the bytes it received, whatever they are. Bodies kept so far are their UTF-8 text.
ALTER TABLE "webhook_inbox_requests" ALTER COLUMN "body" SET DATA TYPE BYTEA USING convert_to("body", 'UTF8');
