// The product's other pages and signing out, in the canvas's top bar. The page's config
// lists the links (kionga/site.py: the admin only for people it lets in), so no URL is
// spelled here; signing out is a form POST with Django's CSRF token, as on every page.
import { csrfToken } from "../api";

export interface SiteLink {
  name: string;
  label: string;
  url: string;
  description: string;
}

export interface SiteConfig {
  home: string;
  sign_out: string;
  links: SiteLink[];
}

interface Props {
  site: SiteConfig;
  // The page showing the nav: its own link is left out.
  current: string;
}

export function SiteNav({ site, current }: Props) {
  return (
    <nav className="site-nav" aria-label="Kionga">
      <a href={site.home}>Home</a>
      {site.links.filter((link) => link.name !== current).map((link) => (
        <a key={link.name} href={link.url} title={link.description}>{link.label}</a>
      ))}
      <form method="post" action={site.sign_out}>
        <input type="hidden" name="csrfmiddlewaretoken" value={csrfToken()} />
        <button type="submit" className="link">Sign out</button>
      </form>
    </nav>
  );
}

// The same, folded behind one button where the top bar is full (the editor's).
export function SiteMenu(props: Props) {
  return (
    <details className="site-menu">
      <summary>Menu</summary>
      <SiteNav {...props} />
    </details>
  );
}
