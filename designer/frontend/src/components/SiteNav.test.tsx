import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, render, screen, within } from "@testing-library/react";
import { Home } from "./Home";
import { SiteMenu, SiteNav, type SiteConfig } from "./SiteNav";

const link = (name: string, label: string, url: string) => ({ name, label, url, description: `${label} page` });
const PERSON: SiteConfig = {
  home: "/", sign_out: "/sign-out",
  links: [link("designer", "Designer", "/designer/"), link("approvals", "Approvals", "/approvals/"),
          link("api_docs", "API docs", "/api/docs/")],
};
const STAFF: SiteConfig = { ...PERSON, links: [...PERSON.links, link("admin", "Admin", "/admin/")] };

function hrefs(nav: HTMLElement): string[] {
  return within(nav).getAllByRole("link").map((a) => a.getAttribute("href")!);
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  document.cookie = "csrftoken=; expires=Thu, 01 Jan 1970 00:00:00 GMT";
});

describe("SiteNav", () => {
  it("links home and to the other pages, the admin only when the config has it", () => {
    render(<SiteNav site={PERSON} current="designer" />);
    expect(hrefs(screen.getByRole("navigation", { name: "Kionga" }))).toEqual(["/", "/approvals/", "/api/docs/"]);
    cleanup();
    render(<SiteNav site={STAFF} current="designer" />);
    expect(hrefs(screen.getByRole("navigation", { name: "Kionga" }))).toEqual(
      ["/", "/approvals/", "/api/docs/", "/admin/"]);
  });

  it("signs out with a POST carrying the CSRF token", () => {
    document.cookie = "csrftoken=abc123";
    render(<SiteNav site={PERSON} current="designer" />);
    const form = screen.getByRole("button", { name: "Sign out" }).closest("form")!;
    expect(form.getAttribute("method")).toBe("post");
    expect(form.getAttribute("action")).toBe("/sign-out");
    const token = form.querySelector<HTMLInputElement>('input[name="csrfmiddlewaretoken"]')!;
    expect(token.type).toBe("hidden");
    expect(token.value).toBe("abc123");
  });

  it("folds behind a Menu button in the editor's bar", () => {
    render(<SiteMenu site={PERSON} current="designer" />);
    const summary = screen.getByText("Menu");
    expect(summary.tagName).toBe("SUMMARY");
    expect(summary.closest("details")!.querySelector("nav")).not.toBeNull();
  });

  it("is in the designs page's top bar", () => {
    vi.stubGlobal("fetch", vi.fn(() => new Promise(() => undefined)));  // the lists never load
    render(<Home projects={[]} designUrl={(id) => `/designer/designs/${id}/`} username="alice" site={STAFF} />);
    const bar = screen.getByRole("banner");
    expect(hrefs(within(bar).getByRole("navigation", { name: "Kionga" }))).toContain("/admin/");
    expect(within(bar).getByRole("button", { name: "Sign out" })).toBeTruthy();
  });
});
