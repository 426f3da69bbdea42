// Whether the signed-in user is a platform administrator (KILN_ADMIN_EMAILS), as their profile says.
import { useEffect, useState } from 'react';
import { myProfile } from './profile.ts';

/** undefined while asking, then true or false (false when the profile cannot be read). */
export function usePlatformAdmin(): boolean | undefined {
  const [admin, setAdmin] = useState<boolean>();
  useEffect(() => {
    let current = true;
    void myProfile.get().then((profile) => profile.platformAdmin, () => false).then((answer) => { if (current) setAdmin(answer); });
    return () => { current = false; };
  }, []);
  return admin;
}
