import type { z } from "zod";
import { db, type Prisma } from "@/lib/db/client";

/** The client inside `db().$transaction(async (tx) => …)`. */
export type Transaction = Parameters<Parameters<ReturnType<typeof db>["$transaction"]>[0]>[0];

/** The cursor no longer holds the value the writer expected: another worker moved it meanwhile. */
export class CursorConflictError extends Error {
  override name = "CursorConflictError";
}

export interface WorkerCursor<T> {
  /** The stored value, or null before the first write. Throws when it does not match the schema. */
  read(tx?: Transaction): Promise<T | null>;
  /**
   * Sets the cursor inside the caller's transaction: it moves if and when that transaction
   * commits. With `expected`, only if it still holds that value (null: no cursor yet); otherwise
   * throws CursorConflictError, which rolls the caller's transaction back. A worker that lost its
   * lock mid-step thus cannot commit over what its successor already did.
   */
  write(tx: Transaction, value: T, opts?: { expected: T | null }): Promise<void>;
}

/** The cursor of one worker (kind, key), holding JSON values of the given schema. */
export function workerCursor<T extends Prisma.InputJsonValue>(kind: string, key: string, schema: z.ZodType<T>): WorkerCursor<T> {
  const id = { kind_key: { kind, key } };
  const conflict = () => new CursorConflictError(`the cursor of ${kind} ${key} was moved by another writer`);
  return {
    async read(tx) {
      const row = await (tx ?? db()).workerCursor.findUnique({ where: id, select: { value: true } });
      if (!row) return null;
      const parsed = schema.safeParse(row.value);
      if (!parsed.success) throw new Error(`the stored cursor of ${kind} ${key} is not valid: ${parsed.error.message}`);
      return parsed.data;
    },
    async write(tx, value, opts) {
      if (!opts) {
        await tx.workerCursor.upsert({ where: id, create: { kind, key, value }, update: { value } });
        return;
      }
      const written =
        opts.expected === null
          ? await tx.workerCursor.createMany({ data: [{ kind, key, value }], skipDuplicates: true })
          : await tx.workerCursor.updateMany({ where: { kind, key, value: { equals: opts.expected } }, data: { value } });
      if (written.count !== 1) throw conflict();
    },
  };
}
