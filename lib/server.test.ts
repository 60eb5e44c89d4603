import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "@/lib/testing/harness";

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});

afterAll(async () => {
  await gw.stop();
});

describe("the HTTP server without Next.js", () => {
  it("answers a console path with 404 WRONG_ENDPOINT as JSON", async () => {
    for (const path of ["/", "/projects", "/favicon.ico"]) {
      const res = await fetch(gw.url + path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-type"), path).toBe("application/json");
      expect(await res.json(), path).toEqual({ code: "WRONG_ENDPOINT", message: "Not found." });
    }
  });
});
