import type { Page } from "@playwright/test";
import { EVM_METHODS } from "../lib/evm/methods";
import { expect, newProjectWithExamples, playgroundResponse, test } from "./fixtures";

const NETWORK = "ethereum-sepolia";
const DEVNET_CHAIN_ID = "990002";

interface Examples {
  latestBlock: { number: string; hash: string } | null;
  txHash: string | null;
  token: { address: string; holder: string; transferTopic: string } | null;
}

/** Signs up, and waits until the devnet runs and its traffic generator has deployed the token. */
function newProjectWithToken(page: Page, tag: string) {
  return newProjectWithExamples<Examples>(page, {
    tag,
    network: NETWORK,
    ready: (examples) => examples.latestBlock !== null && examples.token !== null,
    message: "the devnet should start and the token be deployed",
  });
}

test("the EVM playground runs eth_blockNumber and eth_getLogs on a devnet with values from the chain", async ({ page, context, baseURL }) => {
  test.setTimeout(180_000);
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const { projectId, examples } = await newProjectWithToken(page, "playground-evm");
  const token = examples.token!;

  await page.goto(`/projects/${projectId}/playground`);
  await page.getByRole("tab", { name: "EVM JSON-RPC" }).click();
  await expect(page.getByRole("tab", { name: "EVM JSON-RPC" })).toHaveAttribute("aria-selected", "true");
  await page.getByLabel("Network", { exact: true }).selectOption(NETWORK);
  await expect(page.getByTestId("network-source")).toContainText(`Devnet · chain ID ${DEVNET_CHAIN_ID}`);
  await expect(page).toHaveURL(new RegExp(`[?&]network=${NETWORK}(&|$)`));

  // Every method shows its CU from the catalog.
  await expect(page.getByRole("radio", { name: "eth_getLogs", exact: true })).toHaveAccessibleDescription(new RegExp(`^${EVM_METHODS.eth_getLogs!.cu} compute units`));

  const r = playgroundResponse(page);
  const send = page.getByRole("button", { name: "Send", exact: true });
  const params = page.getByRole("textbox", { name: /^Params of/ });

  // eth_blockNumber: no params, a hex block number.
  await page.getByRole("radio", { name: "eth_blockNumber", exact: true }).check();
  await expect(params).toHaveValue("[]");
  await send.click();
  await expect(r.path).toHaveText(`POST /node/${NETWORK}`);
  await expect(r.status).toContainText("200");
  await expect(r.cu).toHaveText(`${EVM_METHODS.eth_blockNumber!.cu} CU`);
  await expect(r.error).toHaveCount(0);
  await expect(r.tree).toContainText(/"result":\s*"0x[0-9a-f]+"/);

  // eth_getLogs: the template covers the last 100 blocks of the token's Transfer events.
  await page.getByRole("radio", { name: "eth_getLogs", exact: true }).check();
  await expect(params).toHaveValue(new RegExp(token.address));
  const sent = JSON.parse(await params.inputValue()) as Array<{ fromBlock: string; toBlock: string; address: string; topics: string[] }>;
  expect(sent[0]!.topics).toEqual([token.transferTopic]);
  // The last 100 blocks, or all of them while the devnet is younger.
  const to = BigInt(sent[0]!.toBlock);
  expect(to - BigInt(sent[0]!.fromBlock)).toBe(to < 99n ? to : 99n);
  await send.click();
  await expect(r.cu).toHaveText(`${EVM_METHODS.eth_getLogs!.cu} CU`);
  await expect(r.status).toContainText("200");
  await expect(r.error).toHaveCount(0);
  await expect(r.tree.getByRole("button", { name: /^"result":\s*\[ [1-9]\d* items? \]$/ })).toBeVisible();
  await page.getByRole("button", { name: "Raw JSON" }).click();
  const body = JSON.parse((await page.getByTestId("response-raw").textContent()) ?? "") as { result: Array<{ address: string; topics: string[] }> };
  expect(body.result.length).toBeGreaterThan(0);
  for (const log of body.result) {
    expect(log.address.toLowerCase()).toBe(token.address.toLowerCase());
    expect(log.topics[0]).toBe(token.transferTopic);
  }

  // Copy as viem: the key in the path, and the request repeated.
  await page.getByRole("button", { name: "Copy as viem" }).click();
  const snippet = await page.evaluate(() => navigator.clipboard.readText());
  expect(snippet).toMatch(new RegExp(`http\\("${baseURL}/node/${NETWORK}/bg_[1-9A-HJ-NP-Za-km-z]+"\\)`));
  expect(snippet).toContain(`method: "eth_getLogs"`);

  // Wallet settings: devnet chain id, currency, the RPC URL masked until revealed.
  const wallet = page.getByTestId("wallet-settings");
  await expect(wallet).toContainText("Ethereum Sepolia");
  await expect(page.getByTestId("wallet-chain-id")).toContainText(DEVNET_CHAIN_ID);
  await expect(wallet).toContainText("ETH");
  const rpcUrl = page.getByTestId("wallet-rpc-url");
  await expect(rpcUrl).not.toContainText(/bg_[1-9A-HJ-NP-Za-km-z]{20,}/);
  await page.getByRole("button", { name: "Copy RPC URL" }).click();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  expect(copied).toMatch(new RegExp(`^${baseURL}/node/${NETWORK}/bg_[1-9A-HJ-NP-Za-km-z]+$`));
  await page.getByRole("button", { name: "Reveal key" }).click();
  await expect(rpcUrl).toHaveText(copied);
});

test("bad params JSON shows its error and disables Send", async ({ page }) => {
  test.setTimeout(120_000);
  const { projectId } = await newProjectWithToken(page, "playground-evm-params");
  await page.goto(`/projects/${projectId}/playground?network=${NETWORK}&method=eth_getBalance`);
  await expect(page.getByRole("tab", { name: "EVM JSON-RPC" })).toHaveAttribute("aria-selected", "true");
  await expect(page.getByRole("radio", { name: "eth_getBalance", exact: true })).toBeChecked();

  const params = page.getByRole("textbox", { name: /^Params of/ });
  const send = page.getByRole("button", { name: "Send", exact: true });
  const error = page.getByTestId("params-error");
  await expect(params).toHaveValue(/"latest"/);
  await expect(send).toBeEnabled();

  await params.fill('["0x1234", ');
  await expect(error).toContainText("Not valid JSON");
  await expect(params).toHaveAttribute("aria-invalid", "true");
  await expect(send).toBeDisabled();
  await expect(page.getByTestId("send-note")).toHaveText("Fix the params to send.");
  await expect(page.getByTestId("curl-command")).toHaveText("Fix the params to get a snippet.");

  await params.fill('{"address": "0x1234"}');
  await expect(error).toHaveText("The params must be a JSON array, such as [] or [\"latest\", false].");
  await expect(send).toBeDisabled();

  // Back to the template; an error answer from the node costs 0 CU.
  await page.getByRole("button", { name: "Reset to template" }).click();
  await expect(error).toHaveCount(0);
  await expect(send).toBeEnabled();
  await params.fill('["not an address", "latest"]');
  await send.click();
  await expect(playgroundResponse(page).error).toContainText("JSON-RPC error");
  await expect(playgroundResponse(page).cu).toHaveText("0 CU");
});
