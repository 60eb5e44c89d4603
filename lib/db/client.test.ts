import { describe, expect, it } from "vitest";
import { faultProxyDatabase } from "@/lib/testing/fault-proxy";
import { rawPool } from "./client";
import { isDatabaseUnreachable } from "./outage";

const { proxy } = faultProxyDatabase();

describe("the raw pool (chain ingestion's COPY)", () => {
  it("fails the query of a connection dropped while checked out, without crashing the process, and connects again afterwards", async () => {
    const client = await rawPool().connect();
    const running = client.query("SELECT pg_sleep(5)");
    proxy().refuse();
    try {
      await expect(running).rejects.toSatisfy(isDatabaseUnreachable);
    } finally {
      client.release(true);
      proxy().pass();
    }
    const { rows } = await rawPool().query<{ one: number }>("SELECT 1 AS one");
    expect(rows).toEqual([{ one: 1 }]);
  });
});
