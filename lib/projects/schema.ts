import { z } from "zod";

/** Shared by the onboarding form and its route handler. */
export const USE_CASES = [
  { value: "wallet", label: "Wallet" },
  { value: "defi", label: "DeFi application" },
  { value: "nft", label: "NFT or gaming" },
  { value: "analytics", label: "Analytics or indexing" },
  { value: "infrastructure", label: "Infrastructure or tooling" },
  { value: "other", label: "Something else" },
] as const;

/** One line of text a person typed: no control characters (a NUL could not even be stored). */
export const singleLine = (text: z.ZodString) => text.refine((s) => !/[\u0000-\u001f\u007f]/.test(s), "Control characters are not allowed");

export const projectName = singleLine(z.string().trim().min(1, "Enter a project name").max(64, "Use at most 64 characters"));

export const onboardingSchema = z.object({
  name: singleLine(z.string().trim().min(1, "Enter your name").max(80, "Use at most 80 characters")),
  organization: singleLine(z.string().trim().max(80, "Use at most 80 characters")).optional().or(z.literal("")),
  useCase: z.enum(USE_CASES.map((u) => u.value) as [string, ...string[]], { message: "Choose what you are building" }),
});
export type OnboardingInput = z.infer<typeof onboardingSchema>;

export const createProjectSchema = z.object({ name: projectName });
export const renameProjectSchema = z.object({ name: projectName });
