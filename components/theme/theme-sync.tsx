"use client";

import { useLayoutEffect } from "react";
import { THEME_STORAGE_KEY, type Theme } from "./theme";

const THEME_EVENT = "blockgate-theme-change";

function storedTheme(): Theme | null {
  try {
    const value = localStorage.getItem(THEME_STORAGE_KEY);
    return value === "dark" || value === "light" ? value : null;
  } catch {
    return null;
  }
}

function systemPrefersDark(): boolean {
  return typeof window.matchMedia === "function" && window.matchMedia("(prefers-color-scheme: dark)").matches;
}

export function applyTheme(theme: Theme): void {
  document.documentElement.classList.toggle("dark", theme === "dark");
  window.dispatchEvent(new Event(THEME_EVENT));
}

export function resolvedTheme(): Theme {
  return storedTheme() ?? (systemPrefersDark() ? "dark" : "light");
}

export function setTheme(theme: Theme): void {
  try {
    localStorage.setItem(THEME_STORAGE_KEY, theme);
  } catch {
    // Storage may be unavailable (private mode); the choice then lasts for this page only.
  }
  applyTheme(theme);
}

/** The theme currently on <html>, for useSyncExternalStore. */
export function currentTheme(): Theme {
  return document.documentElement.classList.contains("dark") ? "dark" : "light";
}

export function subscribeTheme(onChange: () => void): () => void {
  window.addEventListener(THEME_EVENT, onChange);
  return () => window.removeEventListener(THEME_EVENT, onChange);
}

/**
 * Keeps <html> in sync after hydration: re-applies the stored theme (React's development
 * remount clears the class the inline script set), follows the system preference while the
 * user has not chosen, and picks up a choice made in another tab.
 */
export function ThemeSync() {
  useLayoutEffect(() => {
    applyTheme(resolvedTheme());
    const onStorage = (e: StorageEvent) => {
      if (e.key === THEME_STORAGE_KEY) applyTheme(resolvedTheme());
    };
    window.addEventListener("storage", onStorage);
    const media = typeof window.matchMedia === "function" ? window.matchMedia("(prefers-color-scheme: dark)") : null;
    const onSystem = () => {
      if (storedTheme() === null) applyTheme(resolvedTheme());
    };
    media?.addEventListener("change", onSystem);
    return () => {
      window.removeEventListener("storage", onStorage);
      media?.removeEventListener("change", onSystem);
    };
  }, []);
  return null;
}
