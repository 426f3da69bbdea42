// Sends the notification e-mails owed (notification-mail.entity.ts), whoever wrote them: the API's areas and
// the worker's notices alike. Every API replica runs one sender (notifications/module.ts starts it); rows are claimed with SKIP LOCKED, so two
// replicas never send the same copy. A failed send is tried again on later passes, up to MAIL_ATTEMPTS; an
// address the mail server refuses for good is given up at once.
import { LockMode, type MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { ValidationError } from '../core/errors.ts';
import { UserSchema } from '../auth/user.entity.ts';
import type { Mailer } from '../mail/mailer.ts';
import { describe } from './inbox.ts';
import { createPeriodic, type Periodic } from '../../lib/periodic.ts';
import { MAIL_ATTEMPTS, NotificationMailSchema } from './notification-mail.entity.ts';

export interface MailOutboxDeps {
  orm: MikroORM;
  mailer: Mailer;
  log: Pick<Logger, 'warn' | 'error'>;
}

/** The footer of every copy: where to stop them. */
const FOOTER = 'Change which notifications Kiln e-mails you with POST /v1/notifications.';

/** Copies one pass claims. */
const BATCH_SIZE = 20;

/** One pass: sends up to BATCH_SIZE owed copies, oldest first; answers how many were sent. */
export async function sendOwedMail(deps: MailOutboxDeps): Promise<number> {
  return deps.orm.em.fork().transactional(async (em) => {
    const owed = await em.find(NotificationMailSchema, { sentAt: null, attempts: { $lt: MAIL_ATTEMPTS } },
      { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], limit: BATCH_SIZE, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE });
    if (owed.length === 0) return 0;
    const users = await em.find(UserSchema, { id: { $in: [...new Set(owed.map((m) => m.user.id))] } }, { fields: ['id', 'email'] });
    const emailOf = new Map(users.map((u) => [u.id, u.email]));
    let sent = 0;
    for (const mail of owed) {
      const { title, message } = describe(mail.kind, mail.payload);
      try {
        await deps.mailer.send({ to: emailOf.get(mail.user.id)!, subject: title, text: `${message}\n\n${FOOTER}` });
        mail.sentAt = new Date();
        sent += 1;
      } catch (error) {
        mail.attempts = error instanceof ValidationError ? MAIL_ATTEMPTS : mail.attempts + 1;
        mail.lastError = error instanceof Error ? error.message : String(error);
        deps.log.warn({ err: error, kind: mail.kind, userId: mail.user.id, attempts: mail.attempts }, 'notification e-mail not sent');
      }
    }
    return sent;
  });
}

/** Passes every `intervalMs` once started, until stopped (notifications/module.ts); a pass that sent a full batch is followed at once by another. */
export function createMailOutbox(deps: MailOutboxDeps & { intervalMs?: number }): Periodic {
  return createPeriodic(async () => {
    while ((await sendOwedMail(deps)) === BATCH_SIZE);
  }, { intervalMs: deps.intervalMs ?? 2_000, onError: (error) => deps.log.error({ err: error }, 'notification e-mail pass failed') });
}
