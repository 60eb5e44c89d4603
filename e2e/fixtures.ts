import { randomBytes } from "node:crypto";
import { test as base, expect, type Page } from "@playwright/test";

export const PASSWORD = "correct horse battery staple";

export function uniqueEmail(tag = "e2e"): string {
  return `${tag}-${Date.now()}-${randomBytes(3).toString("hex")}@example.com`;
}

/** Every test fails if the page logs an error or throws: the console must stay clean. */
export const test = base.extend<{ consoleErrors: string[] }>({
  consoleErrors: [
    async ({ page }, use) => {
      const errors: string[] = [];
      page.on("console", (msg) => {
        if (msg.type() === "error") errors.push(msg.text());
      });
      page.on("pageerror", (err) => errors.push(err.message));
      await use(errors);
      expect(errors, "browser console errors").toEqual([]);
    },
    { auto: true },
  ],
});

export { expect };

export async function signUp(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.goto("/sign-up");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign up" }).click();
}

export async function completeOnboarding(page: Page, name = "Ada Lovelace"): Promise<string> {
  await expect(page).toHaveURL(/\/onboarding$/);
  await page.getByLabel("Your name").fill(name);
  await page.getByLabel("What are you building?").selectOption({ index: 1 });
  await page.getByRole("button", { name: "Continue" }).click();
  await expect(page).toHaveURL(/\/projects\/prj_[^/]+$/);
  return new URL(page.url()).pathname.split("/")[2]!;
}

export async function signIn(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.goto("/sign-in");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

export async function callNode(baseURL: string, key: string, network = "ethereum-mainnet") {
  const res = await fetch(`${baseURL}/node/${network}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-KEY": key },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/**
 * Signs up a new user with a project, then polls the playground's examples API for `network`
 * until `ready` accepts its answer (the devnet has produced what the test needs as examples).
 */
export async function newProjectWithExamples<T>(
  page: Page,
  {
    tag,
    network,
    ready,
    message,
    timeout = 90_000,
  }: { tag: string; network: string; ready: (examples: T) => boolean; message: string; timeout?: number },
): Promise<{ projectId: string; examples: T }> {
  await signUp(page, uniqueEmail(tag));
  const projectId = await completeOnboarding(page);
  let examples: T | null = null;
  await expect
    .poll(
      async () => {
        const res = await page.request.get(`/api/projects/${projectId}/playground/examples?network=${network}`);
        if (!res.ok()) return `HTTP ${res.status()}`;
        examples = (await res.json()) as T;
        return ready(examples);
      },
      { message, timeout, intervals: [1000] },
    )
    .toBe(true);
  return { projectId, examples: examples! };
}

/** The playground's response panel. */
export function playgroundResponse(page: Page) {
  return {
    path: page.getByTestId("response-path"),
    status: page.getByTestId("response-status"),
    cu: page.getByTestId("response-cu"),
    tree: page.getByRole("list", { name: "Response JSON" }),
    error: page.getByTestId("response-error"),
  };
}
