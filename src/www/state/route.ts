/**
 * The page's location as a hash route: `#/` (list), `#/new`, `#/c/<conversationId>`,
 * `#/settings`, `#/projects`, `#/me` (the settings page, which holds the user's own settings), `#/p/<projectId>/members`,
 * `#/p/<projectId>/secrets`, `#/p/<projectId>/costs`. A hash keeps every route on the one `index.html` the server serves.
 */
import { useEffect, useState } from 'preact/hooks';

/** Where the page is. */
export type Route =
  | { view: 'home' }
  | { view: 'new' }
  | { view: 'settings' }
  | { view: 'conversation'; conversationId: string }
  | { view: 'projects' }
  | { view: 'me' }
  | { view: 'project-members'; projectId: string }
  | { view: 'project-secrets'; projectId: string }
  | { view: 'project-costs'; projectId: string };

/** Reads a route from a location hash. */
export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '');
  const conversation = /^\/c\/(conv_[0-9A-Za-z]+)$/.exec(path);
  if (conversation) return { view: 'conversation', conversationId: conversation[1] as string };
  const project = /^\/p\/(proj_[0-9A-Za-z]+)\/(members|secrets|costs)$/.exec(path);
  if (project) return { view: `project-${project[2] as 'members' | 'secrets' | 'costs'}`, projectId: project[1] as string };
  if (path === '/projects') return { view: 'projects' };
  if (path === '/me') return { view: 'me' };
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
    case 'projects':
      return '#/projects';
    case 'me':
      return '#/me';
    case 'project-members':
      return `#/p/${route.projectId}/members`;
    case 'project-secrets':
      return `#/p/${route.projectId}/secrets`;
    case 'project-costs':
      return `#/p/${route.projectId}/costs`;
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
