// Outgoing e-mail (invitations, address confirmations) behind one interface: SMTP through nodemailer when
// SMTP_URL is set, otherwise (development only, config.ts enforces it) one structured log line per message.
import type { Logger } from 'pino';
import { ServiceUnavailableError, invalidField } from '../core/errors.ts';
import { loadOnFirstUse } from '../core/load-on-first-use.ts';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** The request field every mailed address comes from, named when the mail server refuses the address. */
const RECIPIENT_FIELD = 'email';

/** nodemailer's report of an SMTP refusal: the server's code and reply. */
interface SmtpFailure { responseCode?: number; response?: string }

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** `url`: `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://...:465` (TLS from the start). */
export function createSmtpMailer(options: { url: string; from: string }): Mailer {
  const transport = loadOnFirstUse(async () => (await import('nodemailer')).default.createTransport(options.url));
  return {
    async send(message) {
      await (await transport()).sendMail({ from: options.from, ...message }).catch((error: unknown) => {
        // Callers send inside their transaction: either error rolls back what the message was about. A
        // permanent refusal of the address (5xx) is the caller's input at fault; anything else (the server
        // away or busy, 4xx) may pass.
        const { responseCode, response } = error as SmtpFailure;
        if (responseCode && responseCode >= 500) {
          throw Object.assign(invalidField(RECIPIENT_FIELD, `the mail server refused this address (${response ?? responseCode})`), { cause: error });
        }
        throw Object.assign(new ServiceUnavailableError('Could not send e-mail; nothing was changed, try again later'), { cause: error });
      });
    },
  };
}

/** Development without SMTP: the message (links included) is logged so a developer can follow it. */
export function createLogMailer(log: Logger): Mailer {
  return {
    send(message) {
      log.info({ mail: message }, 'mail not sent (SMTP_URL unset): logged instead');
      return Promise.resolve();
    },
  };
}

export function createMailer(config: { smtpUrl: string | undefined; mailFrom: string }, log: Logger): Mailer {
  return config.smtpUrl ? createSmtpMailer({ url: config.smtpUrl, from: config.mailFrom }) : createLogMailer(log);
}
