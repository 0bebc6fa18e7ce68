/**
 * The page's location as a hash route: `#/` (list), `#/new`, `#/c/<conversationId>`,
 * `#/settings`. A hash keeps every route on the one `index.html` the server serves.
 */
import { useEffect, useState } from 'preact/hooks';

/** Where the page is. */
export type Route = { view: 'home' } | { view: 'new' } | { view: 'settings' } | { view: 'conversation'; conversationId: string };

/** Reads a route from a location hash. */
export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '');
  const conversation = /^\/c\/(conv_[0-9A-Za-z]+)$/.exec(path);
  if (conversation) return { view: 'conversation', conversationId: conversation[1] as string };
  if (path === '/new') return { view: 'new' };
  if (path === '/settings') return { view: 'settings' };
  return { view: 'home' };
}

/** The hash of a route. */
export function routeHash(route: Route): string {
  switch (route.view) {
    case 'conversation':
      return `#/c/${route.conversationId}`;
    case 'new':
      return '#/new';
    case 'settings':
      return '#/settings';
    default:
      return '#/';
  }
}

/** Goes to a route. */
export function navigate(route: Route): void {
  location.hash = routeHash(route);
}

/** The current route, following hash changes. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}
