"use client";

import { useState } from "react";
import { api, errorMessage } from "@/components/api-client";
import { Button } from "@/components/ui/button";

/** On every console page while the account's email address awaits verification. */
export function VerifyEmailBanner({ email }: { email: string }) {
  const [pending, setPending] = useState(false);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);

  const resend = async () => {
    setPending(true);
    setMessage(null);
    try {
      await api("/api/account/verification-email", { method: "POST", body: {} });
      setMessage({ ok: true, text: `A new link is on its way to ${email}.` });
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    } finally {
      setPending(false);
    }
  };

  return (
    <section
      aria-label="Email verification"
      data-testid="verify-email-banner"
      className="flex flex-wrap items-center gap-x-4 gap-y-2 border-b border-line bg-subtle px-4 py-3 text-sm sm:px-6 lg:px-10"
    >
      <p className="min-w-0 flex-1 text-fg">
        Verify your email address: open the link we sent to <strong className="font-medium">{email}</strong>. Until then this account cannot
        create more projects.
      </p>
      <Button variant="secondary" size="sm" pending={pending} onClick={() => void resend()}>
        Resend email
      </Button>
      {message ? (
        <p role={message.ok ? "status" : "alert"} className={message.ok ? "w-full text-success-text" : "w-full text-danger-text"}>
          {message.text}
        </p>
      ) : null}
    </section>
  );
}
