// Sign-up under pressure, end to end: a second web process, where every sign-up needs a proof of
// work (SIGN_UP_FREE_PER_HOUR=0), so the shared e2e server's sign-ups stay as they are. It serves the
// e2e server's database with its secrets, as a second web process of one deployment would.
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { databaseUrlOf, scratchDataDir, startService, type ServiceProcess } from "./faults/service";
import { completeOnboarding, expect, PASSWORD, test, uniqueEmail } from "./fixtures";

let service: ServiceProcess | undefined;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  const shared = { dataDir: process.env.E2E_DATA_DIR!, env: { EMBEDDED_PG_PORT: process.env.E2E_PG_PORT } };
  const secrets = JSON.parse(readFileSync(path.join(shared.dataDir, "secrets.json"), "utf8")) as Record<string, string>;
  service = await startService(
    scratchDataDir(),
    { ...secrets, DATABASE_URL: databaseUrlOf(shared), ROLE: "web", DEVNETS: "off", SIGN_UP_FREE_PER_HOUR: "0" },
    { withConsole: true },
  );
});

test.afterAll(async () => {
  if (!service) return;
  service.child.kill("SIGTERM");
  await service.exited;
  rmSync(service.dataDir, { recursive: true, force: true });
});

test("under sign-up pressure the form solves a proof of work in the browser, and the account is created", async ({ page }) => {
  const url = service!.url;
  // The API asks for a proof first.
  const bare = await page.request.post(`${url}/api/sign-up`, { data: { email: uniqueEmail("bare"), password: PASSWORD } });
  expect(bare.status()).toBe(400);
  expect(await bare.json()).toEqual({ code: "MISSING_REQUIRED_PARAMETER", message: expect.stringMatching(/^proof: .*GET \/api\/sign-up\/challenge/) });

  // The form's note may show for a few milliseconds only (a lucky nonce): noted as it appears.
  await page.addInitScript(() => {
    new MutationObserver(() => {
      if (document.documentElement.textContent?.includes("Checking your browser… (a second or two)")) sessionStorage.setItem("checked", "yes");
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  await page.goto(`${url}/sign-up`);
  await page.getByLabel("Email").fill(uniqueEmail("pressure"));
  await page.getByLabel("Password").fill(PASSWORD);
  const challenge = page.waitForResponse((r) => r.url() === `${url}/api/sign-up/challenge`);
  await page.getByRole("button", { name: "Sign up" }).click();
  expect(await (await challenge).json()).toMatchObject({ difficulty: 18, challenge: expect.any(String) });
  await completeOnboarding(page, "Patient Person");
  expect(await page.evaluate(() => sessionStorage.getItem("checked"))).toBe("yes");
});
