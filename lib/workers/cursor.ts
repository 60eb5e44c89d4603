import type { z } from "zod";
import { db, type Prisma, type RawClient } from "@/lib/db/client";

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
   * Sets the cursor inside the caller's transaction: a Prisma transaction, or a node-postgres
   * connection inside rawTransaction (lib/db/client.ts). It moves if and when that transaction
   * commits. With `expected`, only if it still holds that value (null: no cursor yet); otherwise
   * throws CursorConflictError, which rolls the caller's transaction back. A worker that lost its
   * lock mid-step thus cannot commit over what its successor already did.
   */
  write(tx: Transaction | RawClient, value: T, opts?: { expected: T | null }): Promise<void>;
}

// The three writes, as SQL run through either client ($1 kind, $2 key, $3 value, $4 expected).
const UPSERT = `INSERT INTO worker_cursors (kind, key, value, updated_at) VALUES ($1, $2, $3::jsonb, now())
  ON CONFLICT (kind, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`;
const CREATE = `INSERT INTO worker_cursors (kind, key, value, updated_at) VALUES ($1, $2, $3::jsonb, now()) ON CONFLICT (kind, key) DO NOTHING`;
const MOVE = "UPDATE worker_cursors SET value = $3::jsonb, updated_at = now() WHERE kind = $1 AND key = $2 AND value = $4::jsonb";

/** Rows a statement changed, through whichever client the caller's transaction is on. */
export async function execute(tx: Transaction | RawClient, text: string, values: unknown[]): Promise<number> {
  if ("$executeRawUnsafe" in tx) return tx.$executeRawUnsafe(text, ...values);
  return (await tx.query(text, values)).rowCount ?? 0;
}

/** The cursor of one worker (kind, key), holding JSON values of the given schema. */
export function workerCursor<T extends Prisma.InputJsonValue>(kind: string, key: string, schema: z.ZodType<T>): WorkerCursor<T> {
  const id = { kind_key: { kind, key } };
  return {
    async read(tx) {
      const row = await (tx ?? db()).workerCursor.findUnique({ where: id, select: { value: true } });
      if (!row) return null;
      const parsed = schema.safeParse(row.value);
      if (!parsed.success) throw new Error(`the stored cursor of ${kind} ${key} is not valid: ${parsed.error.message}`);
      return parsed.data;
    },
    async write(tx, value, opts) {
      const json = JSON.stringify(value);
      if (!opts) {
        await execute(tx, UPSERT, [kind, key, json]);
        return;
      }
      const written = opts.expected === null ? await execute(tx, CREATE, [kind, key, json]) : await execute(tx, MOVE, [kind, key, json, JSON.stringify(opts.expected)]);
      if (written !== 1) throw new CursorConflictError(`the cursor of ${kind} ${key} was moved by another writer`);
    },
  };
}
