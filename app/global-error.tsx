"use client";

import styles from "./global-error.module.css";

/**
 * Last resort when the root layout itself fails: no providers or styles can be assumed. Styles
 * come from a stylesheet, not style attributes, which the Content-Security-Policy refuses.
 */
export default function GlobalError({ reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <html lang="en">
      <body className={styles.body}>
        <main className={styles.main}>
          <h1 className={styles.title}>Something went wrong</h1>
          <p className={styles.text}>Blockgate could not load. Please try again.</p>
          <button type="button" onClick={reset} className={styles.button}>
            Try again
          </button>
        </main>
      </body>
    </html>
  );
}
