import type { Page } from "@playwright/test";
import { DEVNET_CONTRACTS, devnetContractAddresses } from "../lib/evm/devnet/contracts";
import { completeOnboarding, expect, signUp, test, uniqueEmail } from "./fixtures";

/** The devnets run anvil with its default mnemonic: eth_accounts[0] deploys the token. */
const DEPLOYER = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const TOKEN = devnetContractAddresses(DEPLOYER).token;
const TRANSFER = DEVNET_CONTRACTS.token.events.Transfer;
const SIGNATURE = "Transfer(address indexed from, address indexed to, uint256 value)";

/** Fills the builder for a LOG webhook on the devnet token's Transfer events, delivered to a new test inbox. */
async function buildTransferWebhook(page: Page, description: string, opts: { instant?: boolean; to?: string } = {}): Promise<string> {
  await expect(page.getByRole("radio", { name: /Contract log/ })).toBeChecked();
  await page.getByLabel("Network", { exact: true }).selectOption({ label: "Ethereum Mainnet" });
  await page.getByLabel("Contract address").fill(TOKEN);
  await page.getByLabel("Event signature helper").fill(SIGNATURE);
  await expect(page.getByTestId("topic0")).toHaveText(TRANSFER.topic0);
  await expect(page.getByLabel("Topic 0 (event signature hash)")).toHaveValue(TRANSFER.topic0);
  if (opts.to) {
    await page.getByLabel(/^to \(address, topic 2\)/).fill(opts.to);
    await expect(page.getByLabel("Topic 2", { exact: true })).toHaveValue(`0x${"0".repeat(24)}${opts.to.slice(2).toLowerCase()}`);
  }
  await expect(page.getByLabel("Topic 1", { exact: true })).toHaveValue("");
  if (opts.instant) await page.getByLabel("Deliver instantly").check();
  await page.getByLabel("Description").fill(description);
  await page.getByRole("button", { name: "Use a test inbox" }).click();
  const url = page.getByLabel("Webhook URL");
  await expect(url).toHaveValue(/\/v1\/inbox\/[A-Za-z0-9_-]{32}$/);
  return url.inputValue();
}

test("a user builds a LOG webhook with the signature helper, toggles it off and deletes it", async ({ page }) => {
  await signUp(page, uniqueEmail("webhooks"));
  const projectId = await completeOnboarding(page);

  await page.getByRole("link", { name: "Webhooks", exact: true }).click();
  await expect(page.getByRole("heading", { name: "No webhooks yet" })).toBeVisible();
  await page.getByRole("link", { name: "Create webhook" }).last().click();
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/webhooks/new$`));
  // The server runs on loopback with a loopback PUBLIC_URL: the builder says private receivers work.
  await expect(page.getByText("Private and loopback URLs are allowed on this server (local default).")).toBeVisible();

  // The shared schema judges the form before anything is sent.
  await page.getByRole("button", { name: "Create webhook" }).click();
  await expect(page.getByText("Must be a contract address: 0x followed by 40 hex digits (20 bytes)")).toBeVisible();
  await expect(page.getByText("Must be the Keccak-256 hash of the event signature")).toBeVisible();
  await expect(page.getByText("Must not be empty")).toBeVisible();

  // The helper names an indexed parameter's bad value, and only the networks of the event type are offered.
  await page.getByLabel("Event signature helper").fill("Transfer(address indexed from");
  await expect(page.getByText(/Not a valid event signature/)).toBeVisible();
  await page.getByRole("radio", { name: /Transaction/ }).check();
  await expect(page.getByLabel("Network", { exact: true }).locator("option")).toHaveText(["Aptos Mainnet", "Aptos Testnet"]);
  await expect(page.getByText("No difference on Aptos")).toBeVisible();
  await page.getByLabel("Event data (JSON)").fill('{ "a": { "b": { "c": { "d": 1 } } } }');
  await page.getByRole("button", { name: "Create webhook" }).click();
  await expect(page.getByText("May nest at most 3 levels deep")).toBeVisible();
  await page.getByRole("radio", { name: /Contract log/ }).check();

  const inboxUrl = await buildTransferWebhook(page, "Devnet token transfers", { to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" });

  // Preview answers what the condition matched in the devnet's last 100 blocks.
  await page.getByRole("button", { name: "Preview" }).click();
  await expect(page.getByRole("region", { name: "Preview" })).toContainText(/matches? in blocks|No matches/, { timeout: 30_000 });

  await page.getByRole("button", { name: "Create webhook" }).click();
  await expect(page.getByRole("heading", { name: "Webhook created" })).toBeVisible();
  await expect(page.getByTestId("signing-key")).toHaveText(/^whsec_[A-Za-z0-9+/]{43}=$/);
  await expect(page.getByText('import { Webhook } from "standardwebhooks";')).toBeVisible();

  await page.getByRole("link", { name: "Back to webhooks" }).click();
  const row = page.getByTestId("webhook-row").filter({ hasText: "Devnet token transfers" });
  await expect(row).toContainText("Ethereum Mainnet");
  await expect(row).toContainText("LOG");
  await expect(row).toContainText("Active");
  await expect(row).toContainText("No deliveries");

  // The test inbox records what it receives, shown live.
  const inbox = page.getByTestId("inbox");
  await expect(inbox).toHaveCount(1);
  await inbox.getByRole("button", { name: "Show requests" }).click();
  await expect(inbox).toContainText("Nothing received yet");
  const posted = await fetch(inboxUrl, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ hello: "inbox" }) });
  expect(posted.status).toBe(200);
  const received = inbox.getByTestId("inbox-request");
  await expect(received).toContainText('"hello": "inbox"');
  await expect(received).toContainText("Not a webhook of this project");

  // Toggle off.
  const toggle = row.getByRole("switch", { name: "Active: Devnet token transfers" });
  await expect(toggle).toHaveAttribute("aria-checked", "true");
  await toggle.press("Space");
  await expect(toggle).toHaveAttribute("aria-checked", "false");
  await expect(row).toContainText("Inactive");

  // The detail page shows the record and its (empty) history.
  await row.getByRole("link", { name: "Devnet token transfers" }).click();
  await expect(page.getByRole("heading", { name: "Devnet token transfers", level: 1 })).toBeVisible();
  await expect(page.getByRole("region", { name: "Subscription" })).toContainText(TOKEN.toLowerCase());
  await expect(page.getByText(/No deliveries yet/)).toBeVisible();

  // Edit: the shared schema judges the change; what is saved shows at once.
  await page.getByLabel("Description").fill("");
  await page.getByRole("button", { name: "Save changes" }).click();
  await expect(page.getByText("Must not be empty")).toBeVisible();
  await page.getByLabel("Description").fill("Devnet token transfers to account 1");
  await page.getByRole("button", { name: "Save changes" }).click();
  await expect(page.getByRole("heading", { name: "Devnet token transfers to account 1", level: 1 })).toBeVisible();

  // Replay: a bad range is refused before sending.
  await page.getByLabel("From block").fill("20");
  await page.getByLabel("To block").fill("10");
  await page.getByRole("button", { name: "Replay" }).click();
  await expect(page.getByText("Must not be below fromBlock")).toBeVisible();
  await page.getByRole("link", { name: "← Webhooks" }).click();

  // Delete, after confirming.
  await page.getByRole("button", { name: "Delete Devnet token transfers to account 1" }).click();
  const dialog = page.getByRole("dialog", { name: "Delete “Devnet token transfers to account 1”?" });
  await expect(dialog).toBeVisible();
  await dialog.getByRole("button", { name: "Delete webhook" }).click();
  await expect(page.getByRole("heading", { name: "No webhooks yet" })).toBeVisible();
});

// The whole path: the engine follows the devnet, matches the token's transfers, and the delivery
// workers POST them, signed, to the project's test inbox.
test("deliveries of a LOG webhook arrive in the test inbox and the delivery history, signed", async ({ page }) => {
  test.setTimeout(180_000);
  await signUp(page, uniqueEmail("webhooks-delivery"));
  await completeOnboarding(page);
  await page.getByRole("link", { name: "Webhooks", exact: true }).click();
  await page.getByRole("link", { name: "Create webhook" }).last().click();
  await buildTransferWebhook(page, "Devnet token deliveries", { instant: true });
  await page.getByRole("button", { name: "Create webhook" }).click();
  await expect(page.getByRole("heading", { name: "Webhook created" })).toBeVisible();
  await page.getByRole("button", { name: "Send test" }).click();
  await expect(page.getByText(/Test message msg_\w+ queued/)).toBeVisible();
  await page.getByRole("link", { name: "View webhook" }).click();

  // The test message, then the devnet's traffic generator's transfers, delivered with a 2xx.
  const history = page.getByTestId("history-row");
  await expect(history.filter({ hasText: "Test" }).first()).toContainText("Success", { timeout: 30_000 });
  await expect(history.filter({ hasNotText: "Test" }).first()).toContainText("Success", { timeout: 120_000 });
  await page.getByLabel("Status").selectOption("FAIL");
  await expect(page.getByText("No failed attempts.")).toBeVisible();
  await page.getByLabel("Status").selectOption("SUCCESS");
  await page.getByLabel("Show message bodies").check();
  await history.first().getByRole("button", { name: "Details" }).click();
  await expect(page.getByText('"subscriptionType": "WEBHOOK"')).toBeVisible();

  // The inbox verified each signature with the subscription's key.
  await page.getByRole("link", { name: "← Webhooks" }).click();
  const inbox = page.getByTestId("inbox");
  await inbox.getByRole("button", { name: "Show requests" }).click();
  await expect(inbox.getByTestId("inbox-request").first()).toContainText("Signature verified");
  await expect(inbox.getByText("Signature invalid")).toHaveCount(0);

  // Toggled off, then deleted.
  const row = page.getByTestId("webhook-row").filter({ hasText: "Devnet token deliveries" });
  await row.getByRole("switch").click();
  await expect(row).toContainText("Inactive");
  await page.getByRole("button", { name: "Delete Devnet token deliveries" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Delete webhook" }).click();
  await expect(page.getByRole("heading", { name: "No webhooks yet" })).toBeVisible();
});

test("a TRANSACTION webhook on Aptos testnet delivers the devnet's fungible-asset deposits to a test inbox", async ({ page }) => {
  test.setTimeout(180_000);
  await signUp(page, uniqueEmail("webhooks-aptos"));
  await completeOnboarding(page);
  await page.getByRole("link", { name: "Webhooks", exact: true }).click();
  await page.getByRole("link", { name: "Create webhook" }).last().click();

  await page.getByRole("radio", { name: /Transaction/ }).check();
  await page.getByLabel("Network", { exact: true }).selectOption({ label: "Aptos Testnet" });
  await page.getByLabel("Event type").fill("0x1::fungible_asset::Deposit");
  await page.getByLabel("Event account address").fill("0x0");
  await page.getByLabel("Description").fill("Aptos deposits");
  await page.getByRole("button", { name: "Use a test inbox" }).click();
  await expect(page.getByLabel("Webhook URL")).toHaveValue(/\/v1\/inbox\/[A-Za-z0-9_-]{32}$/);

  // Preview finds the devnet's deposits of the last 100 blocks.
  await page.getByRole("button", { name: "Preview" }).click();
  await expect(page.getByRole("region", { name: "Preview" })).toContainText(/matches? in blocks/, { timeout: 30_000 });

  await page.getByRole("button", { name: "Create webhook" }).click();
  await expect(page.getByRole("heading", { name: "Webhook created" })).toBeVisible();
  await page.getByRole("link", { name: "View webhook" }).click();

  // Blocks produced after creation deliver their matching transactions, signed.
  const history = page.getByTestId("history-row");
  await expect(history.first()).toContainText("Success", { timeout: 120_000 });
  await page.getByLabel("Show message bodies").check();
  await history.first().getByRole("button", { name: "Details" }).click();
  await expect(page.getByText('"eventType": "TRANSACTION"').first()).toBeVisible();
  await expect(page.getByText('"type": "0x1::fungible_asset::Deposit"').first()).toBeVisible();

  await page.getByRole("link", { name: "← Webhooks" }).click();
  const inbox = page.getByTestId("inbox");
  await inbox.getByRole("button", { name: "Show requests" }).click();
  await expect(inbox.getByTestId("inbox-request").first()).toContainText("Signature verified");
  await expect(inbox.getByText("Signature invalid")).toHaveCount(0);
});
