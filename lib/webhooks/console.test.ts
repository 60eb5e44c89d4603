// The console's side of webhooks: its routes refuse what every console route refuses, and the
// services they call see every network of a project at once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as inboxRequests from "@/app/api/projects/[projectId]/webhooks/inboxes/[inboxId]/requests/route";
import * as inbox from "@/app/api/projects/[projectId]/webhooks/inboxes/[inboxId]/route";
import * as inboxes from "@/app/api/projects/[projectId]/webhooks/inboxes/route";
import * as history from "@/app/api/projects/[projectId]/webhooks/history/route";
import * as preview from "@/app/api/projects/[projectId]/webhooks/preview/route";
import * as collection from "@/app/api/projects/[projectId]/webhooks/route";
import * as resend from "@/app/api/projects/[projectId]/webhooks/[subscriptionId]/messages/[messageId]/resend/route";
import * as replay from "@/app/api/projects/[projectId]/webhooks/[subscriptionId]/replay/route";
import * as one from "@/app/api/projects/[projectId]/webhooks/[subscriptionId]/route";
import * as test from "@/app/api/projects/[projectId]/webhooks/[subscriptionId]/test/route";
import { db, disconnectDb } from "@/lib/db/client";
import { newId } from "@/lib/ids";
import { networkBySlug } from "@/lib/networks";
import { connectTestDatabase, createTestProject } from "@/lib/testing/harness";
import { createWebhook, getWebhook, listConsoleWebhooks, updateWebhook, webhookHistory, webhookNetwork } from "./service";

beforeAll(async () => {
  await connectTestDatabase();
});
afterAll(async () => disconnectDb());

/** A route handler whatever its params (each is called with all of them). */
type Handler = (req: Request, ctx: never) => Promise<Response>;

describe("console routes", () => {
  const params = { params: Promise.resolve({ projectId: "prj_x", subscriptionId: "wh_x", messageId: "msg_x", inboxId: "inb_x" }) };
  const routes: Array<[string, string, Handler]> = [
    ["GET", "webhooks", collection.GET],
    ["POST", "webhooks", collection.POST],
    ["GET", "webhooks/wh_x", one.GET],
    ["PATCH", "webhooks/wh_x", one.PATCH],
    ["DELETE", "webhooks/wh_x", one.DELETE],
    ["POST", "webhooks/wh_x/test", test.POST],
    ["POST", "webhooks/wh_x/replay", replay.POST],
    ["POST", "webhooks/wh_x/messages/msg_x/resend", resend.POST],
    ["GET", "webhooks/history", history.GET],
    ["POST", "webhooks/preview", preview.POST],
    ["GET", "webhooks/inboxes", inboxes.GET],
    ["POST", "webhooks/inboxes", inboxes.POST],
    ["DELETE", "webhooks/inboxes/inb_x", inbox.DELETE],
    ["GET", "webhooks/inboxes/inb_x/requests", inboxRequests.GET],
  ];

  it("exist for every operation, and refuse changes from another site before anything else", async () => {
    for (const [, , handler] of routes) expect(handler).toBeTypeOf("function");
    for (const [method, path, handler] of routes.filter(([m]) => m !== "GET")) {
      const res = await handler(new Request(`http://localhost:3000/api/projects/prj_x/${path}`, { method, headers: { "Content-Type": "application/json", Origin: "https://evil.example" }, body: method === "DELETE" ? undefined : "{}" }), params as never);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(await res.json()).toMatchObject({ code: "PERMISSION_DENIED" });
    }
  });
});

describe("services for the console", () => {
  it("list every network of a project with each subscription's deliveries of the last 24 hours", async () => {
    const p = await createTestProject("Console", "ENTERPRISE");
    const body = { eventType: "BLOCK_PERIOD", description: "d", notification: { webhookUrl: "https://r.example/" }, condition: { period: 5 } };
    const eth = await createWebhook(p.projectId, webhookNetwork("ethereum-mainnet"), body);
    const aptos = await createWebhook(p.projectId, webhookNetwork("aptos-testnet"), body);
    const messageId = newId("msg");
    await db().webhookMessage.create({ data: { id: messageId, subscriptionId: eth.subscriptionId, projectId: p.projectId, sequenceNumber: 1n, payload: {} } });
    const attempt = (success: boolean, hoursAgo: number, n: number) => ({
      id: newId("att"),
      messageId,
      subscriptionId: eth.subscriptionId,
      projectId: p.projectId,
      attempt: n,
      startedAt: new Date(Date.now() - hoursAgo * 3600_000),
      durationMs: 5,
      httpStatus: success ? 200 : 500,
      success,
    });
    await db().webhookAttempt.createMany({ data: [attempt(false, 1, 1), attempt(true, 1, 2), attempt(true, 2, 3), attempt(false, 30, 4)] });

    const all = await listConsoleWebhooks(p.projectId, {});
    expect(all.total).toBe(2);
    expect(all.items.map((i) => [i.subscriptionId, i.slug, i.deliveries24h])).toEqual([
      [aptos.subscriptionId, "aptos-testnet", { attempts: 0, successes: 0 }],
      [eth.subscriptionId, "ethereum-mainnet", { attempts: 3, successes: 2 }],
    ]);
    expect(all.items[0]).toMatchObject({ protocol: "aptos", network: "testnet", signingKey: aptos.signingKey });
    expect((await listConsoleWebhooks(p.projectId, { network: "aptos-testnet" })).items.map((i) => i.subscriptionId)).toEqual([aptos.subscriptionId]);
    await expect(listConsoleWebhooks(p.projectId, { network: "babylon-mainnet" })).rejects.toMatchObject({ code: "INVALID_PARAMETER", message: "network must be a network with webhooks, such as ethereum-mainnet or aptos-testnet." });
    expect(() => webhookNetwork(undefined)).toThrow(expect.objectContaining({ code: "MISSING_REQUIRED_PARAMETER" }));

    // Without a network, by id alone; the history spans every network.
    expect((await getWebhook({ projectId: p.projectId }, aptos.subscriptionId)).subscriptionId).toBe(aptos.subscriptionId);
    expect((await updateWebhook({ projectId: p.projectId }, aptos.subscriptionId, { description: "renamed" })).description).toBe("renamed");
    expect((await webhookHistory({ projectId: p.projectId }, {})).total).toBe(4);
    const stranger = await createTestProject("Other console");
    await expect(getWebhook({ projectId: stranger.projectId }, aptos.subscriptionId)).rejects.toMatchObject({ code: "RESOURCE_NOT_FOUND", message: `No webhook subscription ${aptos.subscriptionId} in this project.` });
    await expect(getWebhook({ projectId: p.projectId, network: networkBySlug("ethereum-mainnet") }, aptos.subscriptionId)).rejects.toMatchObject({ code: "RESOURCE_NOT_FOUND" });
  });
});
