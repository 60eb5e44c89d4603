import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseBody } from "@/lib/api/route";
import { NETWORK_DEFINITIONS } from "@/lib/network-definitions";
import { changePlanSchema } from "@/lib/projects/plan";
import { createWebhookSchema, updateWebhookSchema } from "@/lib/webhooks/schema";
import { describeIssue, fieldPath, parseInput, parseQuery, queryInput, SENTENCES } from "./validation";

const eth = NETWORK_DEFINITIONS.find((n) => n.slug === "ethereum-sepolia")!;

/** What a call refused with: its code and message. */
function refusal(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (e) {
    const { code, message } = e as { code: string; message: string };
    return { code, message };
  }
  throw new Error("not refused");
}

describe("issues as API errors", () => {
  it("writes field paths with indexes and tells a missing field from a bad one", () => {
    expect(fieldPath(["condition", "topics", 1])).toBe("condition.topics[1]");
    expect(fieldPath([])).toBe("");
    const input = { eventType: "LOG", description: "d", notification: { webhookUrl: "https://x.example/" }, condition: { address: "0x" + "1".repeat(40), topics: ["0x" + "a".repeat(64), "0x12"] } };
    const parsed = createWebhookSchema(eth).safeParse(input);
    expect(parsed.success).toBe(false);
    expect(describeIssue(parsed.error!.issues[0]!, input, SENTENCES)).toEqual({ code: "INVALID_PARAMETER", message: expect.stringMatching(/^condition\.topics\[1\] must be a topic/) });
    const empty = updateWebhookSchema("LOG").safeParse({ condition: { topics: ["0x" + "a".repeat(64)] } });
    expect(describeIssue(empty.error!.issues[0]!, { condition: { topics: [] } }, SENTENCES)).toEqual({ code: "MISSING_REQUIRED_PARAMETER", message: "condition.address is required." });
  });

  it("names a console body's unknown field as the public API does, not in zod's words", async () => {
    const request = new Request("http://localhost:3000/api/projects/prj_x/plan", { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"plan":"FREE","colour":"red"}' });
    await expect(parseBody(request, changePlanSchema)).rejects.toMatchObject({ code: "INVALID_PARAMETER", message: "colour is not a known field: remove it." });
    const nested = z.strictObject({ a: z.strictObject({ b: z.string() }) });
    expect(refusal(() => parseInput(nested, { a: { b: "x", c: 1, d: 2 } }))).toEqual({ code: "INVALID_PARAMETER", message: "a.c, a.d are not known fields: remove them." });
  });

  it("answers an unknown query parameter with the parameters there are, and a repeated one", () => {
    const schema = z.strictObject({ from: z.string().optional(), to: z.string().optional() });
    expect(refusal(() => parseQuery(schema, { from: "1", colour: "red" }))).toEqual({ code: "INVALID_PARAMETER", message: "Unknown parameter colour: use from, to" });
    expect(refusal(() => parseQuery(z.strictObject({}), { window: "1h" }))).toEqual({ code: "INVALID_PARAMETER", message: "Unknown parameter window: this endpoint takes none" });
    expect(refusal(() => queryInput(new URLSearchParams("from=1&from=2")))).toEqual({ code: "INVALID_PARAMETER", message: "from is given more than once: give it once." });
  });

  it("answers a range a refinement refuses with WRONG_RANGE_PARAMETER", () => {
    const range = z.object({ from: z.number(), to: z.number() }).refine((r) => r.from <= r.to, { path: ["to"], message: "must not be below from", params: { code: "WRONG_RANGE_PARAMETER" } });
    expect(refusal(() => parseInput(range, { from: 2, to: 1 }))).toEqual({ code: "WRONG_RANGE_PARAMETER", message: "to: must not be below from" });
  });
});
