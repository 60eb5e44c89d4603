import nodemailer, { type Transporter } from "nodemailer";
import { getEnv } from "@/lib/env";
import { componentLogger } from "@/lib/log";
import { perProcess } from "@/lib/per-process";

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

// Per process (lib/per-process.ts): one transport, and one note that mail is off, whichever bundle sends.
const mail = perProcess("mail", (): { sender?: { url: string; transport: Transporter }; offNoted?: boolean } => ({}));

/** True when SMTP_URL is set: Blockgate sends mail (and asks new accounts to verify their address). */
export function mailEnabled(): boolean {
  return getEnv().SMTP_URL !== undefined;
}

/** Tells the operator once per process that no mail is sent, and what follows from it. */
export function noteMailDisabled(): void {
  if (mail.offNoted) return;
  mail.offNoted = true;
  componentLogger("mail").info("SMTP_URL is not set: no mail is sent, and new accounts are not asked to verify their email address");
}

function transport(url: string): Transporter {
  // Rebuilt when the configuration changes (tests point it at another server).
  if (mail.sender?.url !== url) {
    mail.sender?.transport.close();
    mail.sender = {
      url,
      // Bounded waits: a mail server that hangs must not hold a request for nodemailer's defaults
      // (two minutes to connect, an hour of silence).
      transport: nodemailer.createTransport({ url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 }),
    };
  }
  return mail.sender.transport;
}

/** Sends one message through SMTP_URL from MAIL_FROM. Rejects when the server refuses it or cannot be reached. */
export async function sendMail(mail: Mail): Promise<void> {
  const { SMTP_URL, MAIL_FROM } = getEnv();
  if (SMTP_URL === undefined || MAIL_FROM === undefined) throw new Error("SMTP_URL is not set");
  await transport(SMTP_URL).sendMail({ from: MAIL_FROM, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
}

/** The mail server's host and port, for logs (never its credentials). */
export function mailServer(): string {
  const url = getEnv().SMTP_URL;
  return url === undefined ? "none" : new URL(url).host;
}
