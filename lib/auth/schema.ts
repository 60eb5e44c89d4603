import { z } from "zod";

/** Shared by the sign-up form and its route handler. */
export const email = z
  .string()
  .trim()
  .toLowerCase()
  .max(254, "That email address is too long")
  .pipe(z.email("Enter a valid email address, like you@example.com"));

export const password = z
  .string()
  .min(10, "Use at least 10 characters")
  .max(200, "Use at most 200 characters");

export const signUpSchema = z.object({ email, password });

export const signInSchema = z.object({ email, password: z.string().min(1, "Enter your password").max(200) });
