// Test inboxes end to end: the gateway on a free port, real PostgreSQL, requests signed with the
// npm `standardwebhooks` package exactly as a Standard Webhooks sender signs them.
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { newId } from "@/lib/ids";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";
import { createInbox, deleteInbox, INBOX_KEPT_REQUESTS, INBOXES_PER_PROJECT, listInboxes, listInboxRequests, sweepExpiredInboxes } from "./inbox";

let gw: TestGateway;
type Project = Awaited<ReturnType<typeof createTestProject>>;
let owner: Project;
let stranger: Project;

/** The inbox URL on the test gateway (the URL answered names PUBLIC_URL). */
const at = (url: string) => gw.url + new URL(url).pathname;

async function subscriptionWithMessage(p: Project) {
  const res = await fetch(`${gw.url}/v1/ethereum/mainnet/webhooks`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-KEY": p.apiKey },
    body: JSON.stringify({ eventType: "BLOCK_PERIOD", description: "inbox", notification: { webhookUrl: "https://r.example/" }, condition: { period: 1 } }),
  });
  const rec = (await res.json()) as { subscriptionId: string; signingKey: string };
  const messageId = newId("msg");
  await db().webhookMessage.create({ data: { id: messageId, subscriptionId: rec.subscriptionId, projectId: p.projectId, sequenceNumber: 1n, payload: {} } });
  return { signingKey: rec.signingKey, messageId };
}

function signed(signingKey: string, messageId: string, body: string, when = new Date()) {
  return {
    "webhook-id": messageId,
    "webhook-timestamp": String(Math.floor(when.getTime() / 1000)),
    "webhook-signature": new Webhook(signingKey).sign(messageId, when, body),
  };
}

async function post(url: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(at(url), { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: typeof body === "string" ? body : new Uint8Array(body) });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  gw = await startTestGateway();
  owner = await createTestProject("Inbox owner", "ENTERPRISE");
  stranger = await createTestProject("Stranger", "ENTERPRISE");
});
afterAll(async () => gw.stop());

describe("receiving", () => {
  it("records method, headers and body with no API key, and verifies the subscription's signature", async () => {
    const inbox = await createInbox(owner.projectId);
    expect(inbox.url).toMatch(/^http:\/\/localhost:\d+\/v1\/inbox\/[A-Za-z0-9_-]{32}$/);
    const { signingKey, messageId } = await subscriptionWithMessage(owner);
    const body = JSON.stringify({ subscriptionId: "wh_x", sequenceNumber: "1", event: { period: 1 } });
    const r = await post(inbox.url, body, { ...signed(signingKey, messageId, body), Cookie: "session=secret", "X-Custom": "yes" });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ result: true, id: expect.stringMatching(/^req_/) });
    const [item] = (await listInboxRequests(owner.projectId, inbox.id)).items;
    expect(item).toMatchObject({ id: r.json.id, method: "POST", body, signatureValid: true, receivedAt: expect.stringMatching(/Z$/) });
    expect(item!.headers).toMatchObject({ "webhook-id": messageId, "content-type": "application/json", "x-custom": "yes" });
    expect(item!.headers).not.toHaveProperty("cookie");
    // Nothing is metered: the inbox belongs to no key.
    await gw.meter.flush();
    expect(await db().usageBucket.count({ where: { projectId: owner.projectId, endpoint: { not: "webhooks.create" } } })).toBe(0);
  });

  it("records any bytes exactly (NUL, bytes that are not UTF-8, a byte order mark) and answers them as text or base64", async () => {
    const inbox = await createInbox(owner.projectId);
    const { signingKey, messageId } = await subscriptionWithMessage(owner);
    // 61 00 62 ("a", NUL, "b") failed with 500 and was not recorded; ff was recorded as U+FFFD.
    const nul = await post(inbox.url, Buffer.from([0x61, 0x00, 0x62]), signed(signingKey, messageId, "a\u0000b"));
    expect(nul).toMatchObject({ status: 200, json: { result: true, id: expect.stringMatching(/^req_/) } });
    const bodies = [Buffer.from([0x61, 0xff, 0x62, 0x00]), Buffer.from("\ufeff{}"), Buffer.alloc(0)];
    for (const body of bodies) expect((await post(inbox.url, body)).status).toBe(200);
    const items = (await listInboxRequests(owner.projectId, inbox.id)).items.reverse();
    expect(items.map((i) => [i.body, i.bodyEncoding, i.signatureValid])).toEqual([
      ["a\u0000b", "utf8", true],
      ["Yf9iAA==", "base64", null],
      ["\ufeff{}", "utf8", null],
      ["", "utf8", null],
    ]);
    const rows = await db().webhookInboxRequest.findMany({ where: { inboxId: inbox.id }, orderBy: [{ receivedAt: "asc" }, { id: "asc" }] });
    expect(rows.map((r) => Buffer.from(r.body).toString("hex"))).toEqual([Buffer.from([0x61, 0x00, 0x62]), ...bodies].map((b) => b.toString("hex")));
  });

  it("says false for a wrong signature, a changed body or an old timestamp, and null for messages that are not the project's", async () => {
    const inbox = await createInbox(owner.projectId);
    const { signingKey, messageId } = await subscriptionWithMessage(owner);
    const body = '{"hello":"world"}';
    await post(inbox.url, '{"hello":"mallory"}', signed(signingKey, messageId, body));
    await post(inbox.url, body, signed("whsec_" + Buffer.alloc(32, 7).toString("base64"), messageId, body));
    await post(inbox.url, body, signed(signingKey, messageId, body, new Date(Date.now() - 10 * 60_000)));
    await post(inbox.url, "not json at all", signed(signingKey, messageId, "not json at all"));
    const foreign = await subscriptionWithMessage(stranger);
    await post(inbox.url, body, signed(foreign.signingKey, foreign.messageId, body));
    await post(inbox.url, body);
    const items = (await listInboxRequests(owner.projectId, inbox.id)).items.reverse();
    expect(items.map((i) => i.signatureValid)).toEqual([false, false, false, true, null, null]);
  });

  it("answers an unknown, malformed or expired token 404, a GET 405, a body over 256 kB 413", async () => {
    const inbox = await createInbox(owner.projectId);
    for (const path of ["/v1/inbox/" + "A".repeat(32), "/v1/inbox/short", "/v1/inbox/%00"]) {
      const res = await fetch(gw.url + path, { method: "POST", body: "{}" });
      expect(res.status, path).toBe(404);
      expect(await res.json(), path).toEqual({ code: "RESOURCE_NOT_FOUND", message: "No such test inbox: it may have expired (inboxes last 24 hours)." });
    }
    const get = await fetch(at(inbox.url));
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    const preflight = await fetch(at(inbox.url), { method: "OPTIONS" });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("POST, OPTIONS");
    const big = await post(inbox.url, Buffer.alloc(256 * 1024 + 1, 0x61));
    expect(big.status).toBe(413);
    expect(big.json.code).toBe("CONTENTS_TOO_LARGE");
    expect((await post(inbox.url, Buffer.alloc(256 * 1024, 0x61))).status).toBe(200);
    await db().webhookInbox.update({ where: { id: inbox.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await post(inbox.url, "{}")).status).toBe(404);
    expect((await listInboxRequests(owner.projectId, inbox.id)).items).toHaveLength(1);
  });

  it(`keeps an inbox's last ${INBOX_KEPT_REQUESTS} requests`, async () => {
    const inbox = await createInbox(owner.projectId);
    const old = Date.now() - 3600_000;
    await db().webhookInboxRequest.createMany({
      data: Array.from({ length: INBOX_KEPT_REQUESTS }, (_, i) => ({ id: newId("req"), inboxId: inbox.id, receivedAt: new Date(old + i * 1000), method: "POST", headers: {}, body: new TextEncoder().encode(`old ${i}`) })),
    });
    const r = await post(inbox.url, "newest");
    const items = (await listInboxRequests(owner.projectId, inbox.id)).items;
    expect(items).toHaveLength(INBOX_KEPT_REQUESTS);
    expect(items[0]).toMatchObject({ id: r.json.id, body: "newest" });
    expect(items.at(-1)!.body).toBe("old 1");
    expect(await db().webhookInboxRequest.count({ where: { inboxId: inbox.id } })).toBe(INBOX_KEPT_REQUESTS);
  });

  it("limits the rate per inbox with 429 and Retry-After", async () => {
    const inbox = await createInbox(owner.projectId);
    const answers = await Promise.all(Array.from({ length: 80 }, () => post(inbox.url, "{}")));
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]!.json.code).toBe("TOO_MANY_REQUESTS");
    expect(Number(limited[0]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(answers.filter((a) => a.status === 200).length).toBe(await db().webhookInboxRequest.count({ where: { inboxId: inbox.id } }));
  });
});

describe("managing inboxes", () => {
  it(`keeps ${INBOXES_PER_PROJECT} live inboxes per project; expired ones make room and are swept`, async () => {
    const p = await createTestProject("Inboxes");
    const made = [];
    for (let i = 0; i < INBOXES_PER_PROJECT; i++) made.push(await createInbox(p.projectId));
    await expect(createInbox(p.projectId)).rejects.toMatchObject({ code: "REJECTED", message: expect.stringContaining(`at most ${INBOXES_PER_PROJECT} test inboxes`) });
    const listed = await listInboxes(p.projectId);
    expect(listed).toHaveLength(INBOXES_PER_PROJECT);
    expect(listed[0]).toEqual({ id: expect.stringMatching(/^inb_/), tokenStart: expect.any(String), createdAt: expect.any(String), expiresAt: expect.any(String), requests: 0 });
    expect(Date.parse(listed[0]!.expiresAt) - Date.parse(listed[0]!.createdAt)).toBe(24 * 3600_000);
    expect(listed[0]).not.toHaveProperty("url");

    await db().webhookInbox.update({ where: { id: made[0]!.id }, data: { expiresAt: new Date(Date.now() - 1) } });
    expect(await listInboxes(p.projectId)).toHaveLength(INBOXES_PER_PROJECT - 1);
    await createInbox(p.projectId);
    expect(await db().webhookInbox.count({ where: { projectId: p.projectId } })).toBe(INBOXES_PER_PROJECT);

    await deleteInbox(p.projectId, made[1]!.id);
    await expect(deleteInbox(p.projectId, made[1]!.id)).rejects.toMatchObject({ code: "RESOURCE_NOT_FOUND" });
    await expect(deleteInbox(stranger.projectId, made[2]!.id)).rejects.toMatchObject({ code: "RESOURCE_NOT_FOUND" });
    await expect(listInboxRequests(stranger.projectId, made[2]!.id)).rejects.toMatchObject({ code: "RESOURCE_NOT_FOUND" });

    await db().webhookInbox.update({ where: { id: made[3]!.id }, data: { expiresAt: new Date(Date.now() - 1) } });
    expect(await sweepExpiredInboxes()).toBeGreaterThanOrEqual(1);
    expect(await db().webhookInbox.findUnique({ where: { id: made[3]!.id } })).toBeNull();
  });
});
