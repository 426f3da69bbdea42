// The router: public pages (sign-in, sign-up) on their own, every other page inside the shell and only with
// a session; without one, sign-in, which comes back to the page asked for.
import { Suspense, useEffect, useState } from 'react';
import { Navigate, Route, Routes, useLocation } from 'react-router';
import { onSessionChange, readSession } from './session.ts';
import { ROUTES } from './routes.tsx';
import { Shell } from './Shell.tsx';
import { LoadingBlock } from './ui/index.ts';
import NotFound from './pages/NotFound.tsx';

function useSession() {
  const [session, setSession] = useState(readSession);
  useEffect(() => onSessionChange(setSession), []);
  return session;
}

export function App() {
  const session = useSession();
  const location = useLocation();
  const next = encodeURIComponent(location.pathname + location.search);
  return (
    <Routes>
      {ROUTES.map(({ path, component: Page, public: isPublic }) => (
        <Route
          key={path}
          path={path}
          element={
            isPublic ? (
              <div className="public-page">
                <Suspense fallback={<LoadingBlock label="Loading the page" />}>
                  <Page />
                </Suspense>
              </div>
            ) : session ? (
              <Shell>
                <Page />
              </Shell>
            ) : (
              <Navigate to={`/sign-in?next=${next}`} replace />
            )
          }
        />
      ))}
      <Route path="*" element={session ? <Shell><NotFound /></Shell> : <Navigate to={`/sign-in?next=${next}`} replace />} />
    </Routes>
  );
}
