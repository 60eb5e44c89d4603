-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "allowed_ips" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "allowed_origins" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "last_used_at" TIMESTAMP(3),
ADD COLUMN     "revoked_at" TIMESTAMP(3);
