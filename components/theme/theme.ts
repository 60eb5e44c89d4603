/** Shared by the inline pre-paint script and the toggle, so both read the same choice. */
export const THEME_STORAGE_KEY = "blockgate-theme";
export type Theme = "light" | "dark";

/**
 * Runs synchronously in <head> before first paint: applies the stored choice, or the system
 * preference when the user never chose, as a class on <html>.
 */
export const THEME_SCRIPT = `(function(){try{var t=localStorage.getItem(${JSON.stringify(THEME_STORAGE_KEY)});var d=t==="dark"||(t!=="light"&&window.matchMedia("(prefers-color-scheme: dark)").matches);var c=document.documentElement.classList;if(d){c.add("dark")}else{c.remove("dark")}}catch(e){}})();`;
