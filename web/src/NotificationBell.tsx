// The header's link to the notifications, with the unread count (announced with the link's name).
import { NavLink } from 'react-router';
import { UNREAD_CAP, useUnreadCount } from './notifications.ts';

export function NotificationBell() {
  const unread = useUnreadCount();
  const shown = unread === undefined ? undefined : unread > UNREAD_CAP ? `${UNREAD_CAP}+` : String(unread);
  const name = unread ? `Notifications, ${shown} unread` : 'Notifications';
  return (
    <NavLink to="/notifications" className="button button-quiet bell" aria-label={name} title={name}>
      {/* Drawn, not an emoji: a browser without an emoji font shows a box. */}
      <svg aria-hidden="true" width="20" height="20" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round">
        <path d="M6 8a6 6 0 0 1 12 0c0 7 3 9 3 9H3s3-2 3-9" />
        <path d="M10.3 21a1.94 1.94 0 0 0 3.4 0" />
      </svg>
      {unread ? (
        <span className="bell-count" data-testid="unread-count" aria-hidden="true">
          {shown}
        </span>
      ) : null}
    </NavLink>
  );
}
