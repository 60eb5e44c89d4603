// Text PostgreSQL cannot store (NUL, unpaired surrogates), bytes that are not UTF-8 and paths that
// do not decode, against the console in the real server: refused with 400 naming what is wrong,
// never a 500; a test inbox records any bytes and shows them back.
import fc from "fast-check";
import { CONSOLE_JSON_ROUTES, hostileBody, type ConsoleIds } from "@/lib/testing/hostile-bodies";
import { completeOnboarding, expect, signUp, test, uniqueEmail } from "./fixtures";

const webhook = { network: "ethereum-mainnet", eventType: "BLOCK_PERIOD", description: "Every block", notification: { webhookUrl: "https://receiver.example/hooks" }, condition: { period: 1 } };

test("console routes refuse bodies with NUL, unpaired surrogates or bytes that are not UTF-8 with 400 naming the field", async ({ page }) => {
  test.setTimeout(180_000);
  await signUp(page, uniqueEmail("text"));
  const projectId = await completeOnboarding(page);
  const api = page.request;
  const json = { "Content-Type": "application/json" };

  // The cases: each answered 500.
  const webhooks = `/api/projects/${projectId}/webhooks`;
  for (const [body, message] of [
    [{ ...webhook, description: "a\u0000b" }, "description: must not contain the NUL character (U+0000)."],
    [{ ...webhook, notification: { webhookUrl: "http://a.test/\u0000x" } }, "notification.webhookUrl: must not contain the NUL character (U+0000)."],
  ] as const) {
    const res = await api.post(webhooks, { headers: json, data: JSON.stringify(body) });
    expect([res.status(), await res.json()]).toEqual([400, { code: "INVALID_PARAMETER", message }]);
  }
  const created = await api.post(webhooks, { headers: json, data: JSON.stringify(webhook) });
  expect(created.status()).toBe(201);
  const { subscriptionId } = (await created.json()) as { subscriptionId: string };
  // A lone surrogate was accepted and stored as U+FFFD.
  for (const [description, message] of [
    ["a\u0000b", "description: must not contain the NUL character (U+0000)."],
    ["a\ud800b", "description: must not contain an unpaired surrogate (\\ud800)."],
  ]) {
    const res = await api.patch(`${webhooks}/${subscriptionId}`, { headers: json, data: JSON.stringify({ description }) });
    expect([res.status(), await res.json()]).toEqual([400, { code: "INVALID_PARAMETER", message }]);
  }
  expect(await (await api.get(`${webhooks}/${subscriptionId}`)).json()).toMatchObject({ description: "Every block" });

  // Every route that reads a body, with one key or value of a valid body replaced.
  const keys = (await (await api.get(`/api/projects/${projectId}/keys`)).json()) as { items: Array<{ id: string }> };
  const { csrfToken } = (await (await api.get("/api/auth/csrf")).json()) as { csrfToken: string };
  const ids: ConsoleIds = { projectId, keyId: keys.items[0]!.id, subscriptionId, csrfToken };
  for (const route of CONSOLE_JSON_ROUTES) {
    await fc.assert(
      fc.asyncProperty(hostileBody(route.body(ids)), async (h) => {
        const res = await api.fetch(route.url(ids), { method: route.method, headers: json, data: Buffer.from(h.bytes) });
        const text = await res.text();
        const what = `${route.method} ${route.route}, ${h.what}: ${res.status()} ${text}`;
        expect(res.status(), what).toBe(400);
        const answer = JSON.parse(text) as { code: string; message: string };
        expect(answer.code, what).toBe("INVALID_PARAMETER");
        expect(h.refusalNames(answer.message), what).toBe(true);
      }),
      { numRuns: 20 },
    );
  }
});

test("paths that do not decode answer 400, as JSON on the console API and as text on pages", async ({ request }) => {
  for (const path of ["/api/projects/%ff", "/api/projects/%E0%A4%A"]) {
    const res = await request.get(path);
    expect([path, res.status(), await res.json()]).toEqual([path, 400, { code: "INVALID_PARAMETER", message: "The URL path is not valid percent-encoded UTF-8." }]);
  }
  for (const path of ["/projects/%ff", "/projects/prj_x/webhooks/%ff"]) {
    const res = await request.get(path);
    expect([path, res.status(), await res.text()]).toEqual([path, 400, "Bad request: The URL path is not valid percent-encoded UTF-8.\n"]);
  }
});

test("a test inbox records bytes that are not text and shows them back as hex", async ({ page }) => {
  await signUp(page, uniqueEmail("inbox-bytes"));
  const projectId = await completeOnboarding(page);
  const created = await page.request.post(`/api/projects/${projectId}/webhooks/inboxes`);
  const { url } = (await created.json()) as { url: string };
  // "a", NUL, "b": answered 500 and not recorded.
  const posted = await fetch(url, { method: "POST", headers: { "Content-Type": "application/octet-stream" }, body: new Uint8Array([0x61, 0x00, 0x62]) });
  expect(posted.status).toBe(200);
  await page.goto(`/projects/${projectId}/webhooks`);
  const inbox = page.getByTestId("inbox");
  await inbox.getByRole("button", { name: "Show requests" }).click();
  await expect(inbox.getByTestId("inbox-request")).toContainText("3 bytes, not text (hex): 61 00 62");
});
