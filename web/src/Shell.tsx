// The signed-in layout: the left navigation (a menu on a phone), the header with the organization and the
// user, and the page.
import { Suspense, useEffect, useState, type ReactNode } from 'react';
import { NavLink, useLocation } from 'react-router';
import { signOut } from './api.ts';
import { myOrganization, myProfile } from './profile.ts';
import { usePlatformAdmin } from './platformAdmin.ts';
import { NotificationBell } from './NotificationBell.tsx';
import { unreadChanged } from './notifications.ts';
import { NAV_GROUPS, ROUTES } from './routes.tsx';
import { useLiveEvents, type LiveState } from './live.ts';
import { LoadingBlock, Skeleton, useToast } from './ui/index.ts';
import { useApi } from './ui/useApi.ts';

const LIVE_LABEL: Record<LiveState, string> = { connecting: 'Connecting…', live: 'Live', offline: 'Reconnecting…' };

export function Shell({ children }: { children: ReactNode }) {
  const [menuOpen, setMenuOpen] = useState(false);
  const location = useLocation();
  // A page chosen from the menu closes it.
  useEffect(() => setMenuOpen(false), [location.pathname]);
  const toast = useToast();
  // One socket for the shell: announcements pushed to the organization show as toasts, and the header says
  // whether updates are live. Pages open their own with the filters they need (useLiveEvents).
  const live = useLiveEvents({
    types: ['notification'],
    onEvent: (event) => {
      // Every notification event changes the unread count; pushed announcements also show as toasts.
      unreadChanged();
      if (event.type !== 'notification.pushed') return;
      const data = event.data ?? {};
      toast(`${String(data.title ?? 'Notice')}: ${String(data.message ?? '')}`, data.severity === 'critical' ? 'error' : 'info');
    },
    onResync: unreadChanged,
  });
  const who = useApi(async () => {
    const [profile, organization] = await Promise.all([myProfile.get(), myOrganization.get()]);
    return { profile, organization };
  }, []);
  // Not answered (Kiln unreachable, rate limited): asked again on the next page rather than a skeleton for good.
  const { error: whoError, reload: askWhoAgain } = who;
  useEffect(() => { if (whoError) askWhoAgain(); }, [location.pathname]);
  const platformAdmin = usePlatformAdmin();

  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="header">
        <button type="button" className="button menu-button" aria-expanded={menuOpen} aria-controls="navigation" onClick={() => setMenuOpen((o) => !o)}>
          <span aria-hidden="true">☰</span> Menu
        </button>
        <NavLink to="/" className="brand">
          Kiln
        </NavLink>
        <div className="header-who">
          <span className={`live-state live-${live}`} role="status" title="Live updates">
            <span aria-hidden="true" className="live-dot" />
            <span className="live-label">{LIVE_LABEL[live]}</span>
          </span>
          <NotificationBell />
          <span className="header-org" title="Organization">
            {who.data ? who.data.organization.name : who.error ? '—' : <Skeleton width="8em" />}
          </span>
          <span className="header-user muted">{who.data ? who.data.profile.email : who.error ? '' : <Skeleton width="10em" />}</span>
          <button type="button" className="button button-quiet" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <nav id="navigation" className={menuOpen ? 'nav nav-open' : 'nav'} aria-label="Main">
        {NAV_GROUPS.map((group) => {
          const pages = ROUTES.filter((r) => r.nav === group);
          if (!pages.length || (group === 'Administration' && !platformAdmin)) return null;
          return (
            <div key={group} className="nav-group">
              <h2 className="nav-heading">{group}</h2>
              <ul>
                {pages.map((page) => (
                  <li key={page.path}>
                    {/* Exact when another listed page lies under it (/admin and /admin/reports): one entry is current at a time. */}
                    <NavLink to={page.path} end={page.path === '/' || ROUTES.some((r) => r.nav && r.path.startsWith(`${page.path}/`))}>
                      {page.title}
                    </NavLink>
                  </li>
                ))}
              </ul>
            </div>
          );
        })}
      </nav>
      <main id="main" className="main" tabIndex={-1}>
        <Suspense fallback={<LoadingBlock lines={4} label="Loading the page" />}>{children}</Suspense>
      </main>
    </div>
  );
}
