-- AlterTable
ALTER TABLE "projects" ADD COLUMN     "overage" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "plan_changes" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "user_id" TEXT,
    "user_email" TEXT,
    "from_plan" "Plan" NOT NULL,
    "to_plan" "Plan" NOT NULL,
    "overage" BOOLEAN NOT NULL,
    "revoked_keys" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "plan_changes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "plan_changes_project_id_created_at_idx" ON "plan_changes"("project_id", "created_at");

-- AddForeignKey
ALTER TABLE "plan_changes" ADD CONSTRAINT "plan_changes_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;
