import { CopyButton } from "@/components/ui/copy-button";

/** How a receiver verifies a message with the standardwebhooks package (https://www.standardwebhooks.com). */
export function verificationSnippet(signingKey: string): string {
  return `// npm install standardwebhooks
import { Webhook } from "standardwebhooks";

const webhook = new Webhook("${signingKey}");

// In your handler: the raw request body (a string, before any JSON parsing) and its headers
// (webhook-id, webhook-timestamp, webhook-signature). verify() throws when the signature
// does not match or the timestamp is more than 5 minutes off; it returns the parsed message.
const message = webhook.verify(rawBody, {
  "webhook-id": req.headers["webhook-id"],
  "webhook-timestamp": req.headers["webhook-timestamp"],
  "webhook-signature": req.headers["webhook-signature"],
});`;
}

export function VerificationSnippet({ signingKey }: { signingKey: string }) {
  const code = verificationSnippet(signingKey);
  return (
    <div className="space-y-2">
      <div className="flex items-center justify-between gap-2">
        <h3 className="text-sm font-medium text-fg">Verify the signature (Node.js)</h3>
        <CopyButton value={code} label="Copy verification code" />
      </div>
      <pre className="overflow-x-auto rounded-md border border-line bg-subtle p-3 font-mono text-xs leading-relaxed text-fg">
        <code>{code}</code>
      </pre>
    </div>
  );
}
