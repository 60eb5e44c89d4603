import { z } from "zod";

/** Shared by the sign-up form and its route handler. */
export const email = z
  .string()
  .trim()
  .toLowerCase()
  .max(254, "That email address is too long")
  .pipe(z.email("Enter a valid email address, like you@example.com"));

/** Sign-up refuses longer passwords, so sign-in need not hash anything longer. */
const MAX_PASSWORD_LENGTH = 200;

export const password = z
  .string()
  .min(10, "Use at least 10 characters")
  .max(MAX_PASSWORD_LENGTH, `Use at most ${MAX_PASSWORD_LENGTH} characters`);

export const signUpSchema = z.object({ email, password });

export const signInSchema = z.object({ email, password: z.string().min(1, "Enter your password").max(MAX_PASSWORD_LENGTH) });

/** The Account section's password change: the new password follows the sign-up rules. */
export const changePasswordSchema = z
  .object({
    currentPassword: z.string().min(1, "Enter your current password").max(MAX_PASSWORD_LENGTH),
    newPassword: password,
    confirmPassword: z.string(),
  })
  .refine((v) => v.newPassword === v.confirmPassword, { path: ["confirmPassword"], error: "The two new passwords differ" });
export type SignUpInput = z.infer<typeof signUpSchema>;
