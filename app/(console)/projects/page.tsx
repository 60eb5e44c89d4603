import { redirect } from "next/navigation";

/** /projects has no page of its own: "/" picks the right place (sign-in, onboarding or a project). */
export default function ProjectsIndex() {
  redirect("/");
}
